*** Settings ***
Suite Teardown    Skip    inner skip
*** Test Cases ***
P
    No Operation
F
    Fail    x
S
    Skip    s
