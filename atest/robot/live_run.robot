*** Settings ***
Documentation     A run the agent looks at while it runs, and one killed half-way.
Resource          resource.robot
Test Setup        Start With A Fresh Store
Test Teardown     Stop MCP Server

*** Test Cases ***
A Running Run Is Visible And Completes
    Start Robot With Listener    live    ${TESTDATA}/live    ${DB}    --variable    SOAK:4s
    Wait Until Keyword Succeeds    30s    0.2s    Run Is Listed As    running
    ${summary} =    Wait Until Keyword Succeeds    30s    0.2s    Running Now    Sleep
    ${chain} =    Evaluate    [n['name'] for n in $summary['unfinished']]
    Should Be Equal    ${chain}    ${{['Live', 'Slow', 'Long Soak', 'Sleep']}}
    ${rc} =    Wait For Robot    live
    Should Be Equal As Integers    ${rc}    1
    ${summary} =    View    summary
    Should Be Equal    ${summary}[status]    complete
    Should Be Equal    ${summary}[totals]    ${{{'total': 3, 'passed': 2, 'failed': 1, 'skipped': 0}}}
    Should Be Equal    ${summary}[failed_tests][0][message]    found after the soak

A Killed Run Is Reported Interrupted With What It Had
    Start Robot With Listener    killed    ${TESTDATA}/live    ${DB}    --variable    SOAK:60s
    ${summary} =    Wait Until Keyword Succeeds    30s    0.2s    Running Now    Sleep
    Kill Robot    killed
    ${summary} =    Wait Until Keyword Succeeds    30s    0.5s    Run Is Listed As    interrupted
    ${summary} =    View    summary
    Should Be Equal    ${summary}[status]    interrupted
    ${chain} =    Evaluate    [(n['name'], n['type']) for n in $summary['unfinished']]
    Should Be Equal    ${chain}[-1]    ${{('Sleep', 'KEYWORD')}}
    ${found} =    Search    query=quick
    Should Be Equal    ${found}[hits][0][text]    quick

*** Keywords ***
Start With A Fresh Store
    ${db} =    Fresh Store
    Set Test Variable    ${DB}    ${db}
    Start MCP Server    ${db}
    Set Test Variable    ${RUN}    ${1}

Run Is Listed As
    [Arguments]    ${status}
    ${runs} =    Call Tool    list_runs    status=${status}
    Length Should Be    ${runs}[runs]    1
    Should Be Equal    ${runs}[runs][0][run_id]    ${RUN}

Running Now
    [Arguments]    ${keyword}
    ${summary} =    View    summary
    Should Not Be Empty    ${summary}[unfinished]
    Should Be Equal    ${summary}[unfinished][-1][name]    ${keyword}
    RETURN    ${summary}
