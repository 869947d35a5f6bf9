*** Test Cases ***
Checks Every Price
    FOR    ${item}    ${price}    IN    apple    3    pear    -1    plum    0    fig    5    kiwi    -7
        Run Keyword And Continue On Failure    Price Should Be Positive    ${item}    ${price}
    END

*** Keywords ***
Price Should Be Positive
    [Arguments]    ${item}    ${price}
    Should Be True    ${price} > 0    ${item} costs ${price}
