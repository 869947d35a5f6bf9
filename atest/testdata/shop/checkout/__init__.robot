*** Settings ***
Suite Setup       Connect To Payment Gateway

*** Keywords ***
Connect To Payment Gateway
    Log    connecting to https://shop:gateway-pass-7731@pay.example/api
    Fail    Payment gateway unreachable: connection refused
