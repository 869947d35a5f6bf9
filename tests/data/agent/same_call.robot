*** Variables ***
${CHECK}    ${0}

*** Test Cases ***
Checks The Same Page Three Times
    [Tags]    robot:continue-on-failure
    Next Check Should Pass
    Next Check Should Pass
    Next Check Should Pass

*** Keywords ***
Next Check Should Pass
    ${n} =    Evaluate    ${CHECK} + 1
    Set Test Variable    ${CHECK}    ${n}
    Fail    check ${n} failed
