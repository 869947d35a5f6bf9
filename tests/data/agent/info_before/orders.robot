*** Settings ***
Library    Api.py

*** Test Cases ***
Order Lookup
    Log    looking up order
    Lookup Order    42

Status Code
    ${status} =    Set Variable    ${503}
    Should Be Equal As Integers    ${status}    200

*** Keywords ***
Lookup Order
    [Arguments]    ${order}
    Log Then Pass
    Get Order    ${order}
