*** Test Cases ***
Skipped On Failure
    [Tags]    robot:skip-on-failure
    Fail    z
Noncritical
    Fail    w
