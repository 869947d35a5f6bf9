*** Settings ***
Resource          common.resource
Library           Stock.py

*** Test Cases ***
Order Two Items
    [Documentation]    One item is out of stock.
    [Tags]    smoke
    [Timeout]    1 minute
    Place Order    apple
    FOR    ${item}    IN    kiwi    pear
        Place Order    ${item}
    END

Retry And Recover
    TRY
        Local Helper    boom
    EXCEPT    boom*    type=GLOB    AS    ${error}
        Log    recovered from ${error}
    FINALLY
        Log    done
    END
    ${count} =    Set Variable    ${0}
    WHILE    ${count} < 2
        ${count} =    Evaluate    ${count} + 1
    END
    Run Keyword    Local Helper    fine
    Count Items    apple
    Fail    final failure

*** Keywords ***
Local Helper
    [Arguments]    ${what}
    IF    '${what}' == 'boom'
        Fail    boom happened
    ELSE
        Log    ${what}
    END
