*** Settings ***
Documentation     Shapes where live capture, output.xml, output.json (robot's and rebot's) and
...               RF's own model can disagree (tests/test_differential.py).
Library           OddLib.py
Suite Setup       Log    suite setup
Suite Teardown    Log    suite teardown

*** Test Cases ***
Odd Argument Values
    Odd Arguments
    @{values} =    Odd Values
    FOR    ${value}    IN    @{values}
        Log    ${value}
    END
    Run Keyword    Log Many    @{values}
    Log    text with \x01 a control character
    Log    line\r\nbreak
    Log Many    a    ${EMPTY}    b

Keyword Setups And Teardowns
    ${value} =    With Fixtures    1
    Should Be Equal As Integers    ${value}    2

Renamed At Start
    Log    renamed at start

Renamed At End
    Log    renamed at end

Status Changed
    Log    passes, then a listener fails it

Status Changed After Its End
    Log    passes, and stays PASS in its own record

Messages Edited By A Listener
    Log    please mask me
    Log    secret-arg

Edits An Earlier Test
    Log    the listener edits an earlier test's message now

*** Keywords ***
With Fixtures
    [Arguments]    ${x}
    [Setup]    Log    setup ${x}
    ${y} =    Evaluate    ${x} + 1
    RETURN    ${y}
    [Teardown]    Log    teardown ${x}
