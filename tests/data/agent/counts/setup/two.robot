*** Settings ***
Suite Setup    Fail    setup
*** Test Cases ***
T1
    No Operation
T2
    [Tags]    robot:skip-on-failure
    Fail    y
