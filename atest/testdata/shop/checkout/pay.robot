*** Test Cases ***
Pay With Card
    Log    paying
Pay With Voucher
    Log    paying with voucher
