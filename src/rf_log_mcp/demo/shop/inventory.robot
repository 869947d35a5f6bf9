*** Settings ***
Library           ShopApi.py

*** Test Cases ***
Every Item Is In Stock
    FOR    ${item}    IN    apple    pear    plum
        ${count} =    Stock Of    ${item}
        Run Keyword And Continue On Failure    Should Be True    ${count} > 0    ${item} is out of stock
    END

Stock Levels By Template
    [Template]    Stock Should Be At Least
    apple    10
    plum     5
    kiwi     1

*** Keywords ***
Stock Should Be At Least
    [Arguments]    ${item}    ${minimum}
    ${count} =    Stock Of    ${item}
    Should Be True    ${count} >= ${minimum}
