*** Test Cases ***
Warns A Lot
    FOR    ${i}    IN RANGE    14
        Log    deprecated keyword used    WARN
    END
    Log    another warning    WARN
    Fail    boom

Second Fails
    Fail    again
