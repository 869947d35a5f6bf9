*** Settings ***
Library    Shop.py
Suite Setup    Open Shop Session

*** Test Cases ***
Status Check
    ${resp} =    Get Order    42
    Log    checking the order
    Should Be Equal As Integers    ${resp.status_code}    200

Inside A Control Structure
    ${resp} =    Get Order    43
    FOR    ${attempt}    IN RANGE    1
        IF    ${attempt} == 0
            Should Be Equal As Integers    ${resp.status_code}    200
        END
    END

Nearest Assignment First
    ${Order_Id} =    Set Variable    41
    ${order id} =    Set Variable    42
    VAR    ${expected}    40
    ${ok} =    Run Keyword And Return Status    Fail    not handled here
    Should Be Equal    ${{ $expected + 1 }}    ${ORDERID}    msg=${ok}

Through A Keyword Call
    ${resp} =    Get Order    44
    Check Order    ${resp}

Through A Loop's Values
    @{orders} =    Create List    45    46
    ${limit} =    Set Variable    45
    FOR    ${order}    IN    @{orders}
        Should Be True    ${order} <= ${limit}
    END

Many Arguments
    &{limits} =    Create Dictionary    a=1    b=2    c=3    d=4    e=5    f=6    g=7    h=8
    Should Be Equal    ${limits}[h]    9

Through A Wrapping Keyword
    ${resp} =    Fetch Order    47
    Should Be Equal As Integers    ${resp.status_code}    200

Two Assigned At Once
    ${code}    ${reason} =    Create List    503    busy
    ${retry} =    IF    ${code} > 500    Set Variable    later    ELSE    Set Variable    never
    Should Be Equal    ${code}    200    msg=${retry}

A Loop's Condition
    &{state} =    Create Dictionary    phase=init
    WHILE    $state['phase'] != 'done' and ${state}[attempts] < 3
        Log    waiting
    END

Assigned In Blocks Before
    TRY
        ${ticket} =    Set Variable    t-expired
    EXCEPT
        Log    no token
    END
    FOR    ${attempt}    IN RANGE    2
        ${state} =    Set Variable    attempt-${attempt}
    END
    GROUP    Prepare
        ${user} =    Set Variable    ann
    END
    Should Be Equal    ${ticket}:${state}:${user}    ok

Embedded Arguments
    ${user} =    Set Variable    bob
    User "${user}" Should Be Admin

Evaluated Expression
    ${resp} =    Get Order    48
    Should Be True    $resp.status_code == 200

Found In A Loop's IF
    ${found} =    Set Variable    none
    FOR    ${name}    IN    ann    bob
        IF    $name == 'bob'
            ${found} =    Set Variable    ${name}
            Assign Found Locally
        END
    END
    Should Be Equal    ${found}    cid

Names Past ASCII
    ${Äiti} =    Set Variable    Anna
    Should Be Equal    ${äiti}    Liisa

Set By A Keyword Before
    Fetch Order Into Test Variable    49
    Should Be Equal As Integers    ${ORDER.status_code}    200

Set In The Suite Setup
    Check Session

Set With VAR's Scope
    Prepare Order
    Should Be Equal    ${prepared}    no

Creates What The Next One Uses
    Log    created order o-77
    Set Suite Variable    ${CREATED}    o-77

Uses What A Test Before Set
    Should Be Equal    ${CREATED}    o-78

Guarded By A Condition
    ${count} =    Get Length    ${{ [1, 2] }}
    IF    ${count} < 3
        Fail    Not enough items
    END

Guarded By Run Keyword If
    ${count} =    Get Length    ${{ [1] }}
    Run Keyword If    ${count} < 3    Fail    Not enough items

Guarded By An ELSE
    ${status} =    Set Variable    503
    IF    ${status} == 200
        Log    ok
    ELSE IF    $status == '404'
        Log    missing
    ELSE
        Fail    Unexpected status
    END

A Loop Its Limit Stopped
    ${state} =    Set Variable    starting
    WHILE    $state != 'ready'    limit=2
        ${state} =    Set Variable    booting
    END

*** Keywords ***
Open Shop Session
    ${s} =    Set Variable    s-1
    Log    session opened
    Set Suite Variable    ${SESSION}    ${s}

Fetch Order Into Test Variable
    [Arguments]    ${id}
    ${found} =    Get Order    ${id}
    Set Test Variable    \${ORDER}    ${found}

Check Session
    Should Be Equal    ${SESSION}    s-2

Prepare Order
    VAR    ${prepared}    yes    scope=TEST
User "${name}" Should Be Admin
    Fail    ${name} is not admin

Assign Found Locally
    IF    True
        ${found} =    Set Variable    local
    END
Fetch Order
    [Arguments]    ${id}
    ${found} =    Get Order    ${id}
    RETURN    ${found}

Check Order
    [Arguments]    ${resp}
    Should Be Equal As Integers    ${resp.status_code}    200
