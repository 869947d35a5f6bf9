*** Test Cases ***
Loops Forever
    WHILE    True    limit=3
        No Operation
    END

Checks Twice
    Run Keyword And Continue On Failure    Should Be Equal    1    2
    Run Keyword And Continue On Failure    Fail    second check

Stops Everything
    Fatal Error    database is gone

Never Runs
    No Operation
