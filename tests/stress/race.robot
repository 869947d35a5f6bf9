*** Settings ***
Documentation     Every shape whose model the live listener reads while robot changes it:
...               keyword setups and teardowns (user keywords among them), return values
...               assigned after a teardown ran, nested user keywords, FOR/WHILE loops,
...               IF/TRY, GROUP, VAR, retries, continuable failures and timeouts.
Suite Setup       Fixture Keyword    suite setup
Suite Teardown    Fixture Keyword    suite teardown
Test Teardown     Log    test teardown ${TEST NAME}

*** Variables ***
${ROUNDS}         12

*** Test Cases ***
Nested Keywords With Fixtures
    FOR    ${i}    IN RANGE    ${ROUNDS}
        ${value} =    Outer    ${i}
        Log    got ${value}
    END

Control Structures
    FOR    ${i}    IN RANGE    ${ROUNDS}
        Controls    ${i}
    END

Loops That Stop
    VAR    ${n}    ${0}
    WHILE    $n < 40    limit=25    on_limit=pass
        ${n} =    Evaluate    ${n} + 1
        IF    $n % 7 == 0    CONTINUE
        Log    while ${n}
    END
    FOR    ${word}    IN    a    b    stop    c
        IF    '${word}' == 'stop'    BREAK
        Log    word ${word}
    END
    FOR    ${index}    ${item}    IN ENUMERATE    x    y    z
        Log    ${index}=${item}
    END

Keyword Timeouts
    [Timeout]    30 s
    FOR    ${i}    IN RANGE    ${ROUNDS}
        Run Keyword And Ignore Error    Guarded    ${i}
    END
    ${status}    ${error} =    Run Keyword And Ignore Error    Too Slow
    Should Be Equal    ${status}    FAIL

Retries And Continuable Failures
    VAR    ${ATTEMPTS}    ${0}    scope=TEST
    Wait Until Keyword Succeeds    4x    1 ms    Flaky
    Run Keyword And Continue On Failure    Fail    first continuable
    Log    after the first
    Run Keyword And Continue On Failure    Outer    ${99}
    Run Keyword And Continue On Failure    Fail    second continuable

Groups And Variables
    GROUP    Prepare
        VAR    ${local}    prepared
        Log    ${local}
        GROUP
            Outer    ${5}
        END
    END
    VAR    @{items}    one    two    three
    Log Many    @{items}

Test Setup Fails
    [Setup]    Fixture Keyword    fails
    Log    never runs

Teardown Fails After A Pass
    Outer    ${3}
    [Teardown]    Fixture Keyword    fails

*** Keywords ***
Outer
    [Arguments]    ${i}
    [Setup]    Fixture Keyword    outer setup ${i}
    ${x} =    Middle    ${i}
    RETURN    ${x}
    [Teardown]    Fixture Keyword    outer teardown ${i}

Middle
    [Arguments]    ${i}
    [Setup]    Log    middle setup ${i}
    ${y} =    Evaluate    ${i} * 2
    ${z} =    Innermost    ${y}
    RETURN    ${z}
    [Teardown]    Log    middle teardown ${i}

Innermost
    [Arguments]    ${value}
    Log    innermost ${value}    DEBUG
    RETURN    ${value}

Fixture Keyword
    [Arguments]    ${what}
    Log    fixture ${what}
    IF    'fails' in $what    Fail    fixture ${what}
    [Teardown]    Log    fixture teardown ${what}

Controls
    [Arguments]    ${i}
    ${rest} =    Evaluate    ${i} % 3
    IF    ${rest} == 0
        Log    zero ${i}
    ELSE IF    ${rest} == 1
        Outer    ${i}
    ELSE
        TRY
            Fail    odd ${i}
        EXCEPT    odd*    type=glob    AS    ${error}
            Log    caught ${error}
        FINALLY
            Log    finally ${i}
        END
    END
    VAR    ${n}    ${0}
    WHILE    ${n} < 2
        ${n} =    Evaluate    ${n} + 1
    END
    [Teardown]    Log    controls teardown ${i}

Guarded
    [Arguments]    ${i}
    [Timeout]    5 s
    [Setup]    Log    guarded setup ${i}
    Outer    ${i}
    IF    ${i} % 4 == 3    Fail    guarded ${i}
    [Teardown]    Log    guarded teardown ${i}

Too Slow
    [Timeout]    50 ms
    [Setup]    Log    slow setup
    Sleep    0.2 s
    [Teardown]    Log    slow teardown

Flaky
    VAR    ${ATTEMPTS}    ${ATTEMPTS + 1}    scope=TEST
    Outer    ${ATTEMPTS}
    IF    ${ATTEMPTS} < 3    Fail    attempt ${ATTEMPTS}
