*** Settings ***
Library    Api.py

*** Test Cases ***
Order Lookup
    Log    looking up order
    Lookup Order    42

*** Keywords ***
Lookup Order
    [Arguments]    ${order}
    Log Then Pass
    Get Order    ${order}
