*** Test Cases ***
Walks The Tree
    Visit    0

*** Keywords ***
Visit
    [Arguments]    ${level}
    ${next} =    Evaluate    ${level} + 1
    Visit    ${next}
