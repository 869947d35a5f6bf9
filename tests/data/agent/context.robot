*** Settings ***
Documentation    Stock levels per warehouse.
Library          Collections

*** Test Cases ***
Stock Is Consistent
    [Documentation]    Every warehouse reports the stock the ledger has.
    [Tags]    stock    nightly
    ${ledger} =    Create Dictionary    north=5    south=7    east=2
    FOR    ${warehouse}    IN    north    south    east
        ${reported} =    Reported Stock    ${warehouse}
        IF    $warehouse != 'north'
            Dictionary Should Contain Item    ${ledger}    ${warehouse}    ${reported}
        END
    END

*** Keywords ***
Reported Stock
    [Arguments]    ${warehouse}
    IF    $warehouse == 'south'
        RETURN    9
    ELSE
        RETURN    ${{ {'north': '5', 'east': '2'}[$warehouse] }}
    END
