*** Test Cases ***
Lists Orders
    Log    never reached

Cancels Order
    Log    never reached either
