*** Settings ***
Library           HttpLike.py
Test Template     Price Should Be

*** Test Cases ***    ITEM     PRICE
Apple                 apple    1.2
Pear                  pear     0.8
Mango                 mango    1.0

*** Keywords ***
Price Should Be
    [Arguments]    ${item}    ${expected}
    ${price} =    Price Of    ${item}
    Should Be Equal As Numbers    ${price}    ${expected}
