*** Test Cases ***
Nightly Stock Check
    [Documentation]    Three warehouses, 40 shelves each; one shelf is empty.
    FOR    ${warehouse}    IN    north    south    east
        FOR    ${shelf}    IN RANGE    40
            Check Shelf    ${warehouse}    ${shelf}
        END
    END

*** Keywords ***
Check Shelf
    [Arguments]    ${warehouse}    ${shelf}
    Log    checking ${warehouse} shelf ${shelf}
    IF    '${warehouse}' == 'south' and ${shelf} == 31
        Log    shelf ${warehouse}/${shelf} reads 0 items    WARN
        Fail    ${warehouse} shelf ${shelf} is empty
    END
