*** Test Cases ***
First
    Log    ok
Slow One
    Log    started    WARN
    Sleep    60s
Third
    Log    never
Fourth
    Log    never
