*** Settings ***
Documentation     A finished run of the shop suite: summary, failure paths, folded loops,
...               scoped search and masked secrets, as an agent asks for them.
Resource          resource.robot
Suite Setup       Run The Shop Suite
Suite Teardown    Stop MCP Server

*** Test Cases ***
Summary Gives Totals And Failed Tests With Their Messages
    ${summary} =    View    summary
    Should Be Equal    ${summary}[status]    complete
    Should Be Equal    ${summary}[result_status]    FAIL
    Should Be Equal    ${summary}[totals]    ${{{'total': 8, 'passed': 3, 'failed': 5, 'skipped': 0}}}
    # the two tests stopped by their suite's setup share one failure signature: one group
    ${names} =    Evaluate    [t['name'] for t in $summary['failed_tests']]
    Should Be Equal    ${names}    ${{['Bob Gets A Server Error', 'Mango', 'Nightly Stock Check']}}
    ${messages} =    Evaluate    {t['name']: t['message'] for t in $summary['failed_tests']}
    Should Be Equal    ${messages}[Bob Gets A Server Error]    Expected HTTP 200 but got 503
    ${group} =    Set Variable    ${summary}[failure_groups][0]
    Should Be Equal    ${group}[count]    ${2}
    Should Be Equal    ${group}[cause][reason]    parent_suite_setup
    ${all} =    View    summary    selector=failed
    ${names} =    Evaluate    [t['name'] for t in $all['failed_tests']]
    Should Be Equal    ${names}    ${{['Pay With Card', 'Pay With Voucher', 'Bob Gets A Server Error', 'Mango', 'Nightly Stock Check']}}

Failure Path Goes Down To The Failing HTTP Check
    ${id} =    Test Id    Bob Gets A Server Error
    ${path} =    View    failure_path    selector=${id}
    ${names} =    Evaluate    [step['name'] for step in $path['path']]
    Should Be Equal    ${names}    ${{['Bob Gets A Server Error', 'Login As', 'Status Should Be']}}
    ${last} =    Set Variable    ${path}[path][-1]
    Should Be Equal    ${last}[messages][0][level]    FAIL
    Should Be Equal    ${last}[messages][0][text]    Expected HTTP 200 but got 503
    # the run logs at DEBUG: the library's traceback follows, with its own frame
    Should Be Equal    ${last}[messages][-1][level]    DEBUG
    Should Contain    ${last}[messages][-1][text]    HttpLike.py", line 27, in status_should_be

Template Test Failure Names The Failing Row
    ${id} =    Test Id    Mango
    ${path} =    View    failure_path    selector=${id}
    Should Be Equal    ${path}[path][1][name]    Price Should Be
    Should Be Equal    ${path}[path][1][args]    ${{['mango', '1.0']}}
    Should Be Equal    ${path}[path][-1][messages][0][text]    Unknown item 'mango'
    Should Contain    ${path}[path][-1][messages][-1][text]    HttpLike.py", line 34, in price_of

Suite Setup Failure In A Sub-Suite Is The Failure Path Of Its Tests
    ${id} =    Test Id    Pay With Card
    ${summary} =    View    summary    selector=failed
    ${messages} =    Evaluate    {t['name']: t['message'] for t in $summary['failed_tests']}
    Should Be Equal    ${messages}[Pay With Card]
    ...    Parent suite setup failed:\nPayment gateway unreachable: connection refused
    ${path} =    View    failure_path    selector=${id}
    Should Be Equal    ${path}[path][0][node_id]    ${id}

Tree Folds The Passing Iterations Of A Loop
    ${id} =    Test Id    Nightly Stock Check
    ${test} =    View    tree    selector=${id}    projection=failures
    ${outer} =    Set Variable    ${test}[children][0][node_id]
    ${warehouses} =    View    tree    selector=${outer}
    ${south} =    Set Variable    ${warehouses}[children][1]
    ${expected} =    Create Dictionary    \${warehouse}=south
    Should Be Equal    ${south}[assign]    ${expected}
    Should Be Equal    ${south}[status]    FAIL
    ${inner_loop} =    View    tree    selector=${south}[node_id]
    ${shelves} =    View    tree    selector=${inner_loop}[children][0][node_id]
    ${kinds} =    Evaluate    [c.get('kind', c.get('type')) for c in $shelves['children']]
    Should Be Equal    ${kinds}    ${{['ITERATION_GROUP', 'ITERATION']}}
    Should Be Equal    ${shelves}[children][0][count]    ${31}
    ${expected} =    Create Dictionary    \${shelf}=31
    Should Be Equal    ${shelves}[children][1][assign]    ${expected}
    ${group} =    View    tree    selector=${shelves}[children][0][expand_selector]
    Length Should Be    ${group}[children]    25
    ${expected} =    Create Dictionary    \${shelf}=0
    Should Be Equal    ${group}[children][0][assign]    ${expected}

Scoped Search Inside The Failing Iteration
    ${id} =    Test Id    Nightly Stock Check
    ${found} =    Search    query=shelf    min_level=WARN    selector=${id}    scope=test    detail=full
    ${texts} =    Evaluate    [h['text'] for h in $found['hits']]
    Should Be Equal    ${texts}    ${{['shelf south/31 reads 0 items', 'south shelf 31 is empty']}}
    ${hit} =    Set Variable    ${found}[hits][0]
    ${expected} =    Create Dictionary    \${shelf}=31
    Should Be Equal    ${hit}[iteration][values]    ${expected}
    Should Be Equal    ${hit}[branch][type]    IF
    Should Contain    ${hit}[call_path]    ITERATION \${warehouse}=south > ITERATION \${shelf}=31
    ${iteration} =    Set Variable    ${hit}[iteration][node_id]
    ${inside} =    Search    query=checking    selector=${iteration}
    ${texts} =    Evaluate    [h['text'] for h in $inside['hits'] if h['level'] == 'INFO']
    Should Be Equal    ${texts}    ${{['checking south shelf 31']}}

Secrets Are Masked In Every Answer
    ${found} =    Search    query=password
    ${text} =    Response Text    ${found}
    Should Contain    ${text}    password=***
    Should Not Contain    ${text}    Tr0ub4dor&3
    Should Be True    ${found}[masked_values] >= 2
    ${headers} =    Search    query=Authorization    level=DEBUG
    ${text} =    Response Text    ${headers}
    Should Contain    ${text}    'Authorization': 'Bearer ***'
    Should Not Contain    ${text}    92f1c0
    ${setup} =    Search    query=pay.example
    ${text} =    Response Text    ${setup}
    Should Contain    ${text}    https://shop:***@pay.example/api
    Should Not Contain    ${text}    gateway-pass-7731
    ${traces} =    Search    level=TRACE    query=Arguments
    ${text} =    Response Text    ${traces}
    Should Contain    ${text}    \${password}='***'
    Should Not Contain    ${text}    Tr0ub4dor&3
    ${nothing} =    Search    query=Tr0ub4dor
    Should Be Empty    ${nothing}[hits]
    ${id} =    Test Id    Bob Gets A Server Error
    ${resource} =    Read Resource    rf://runs/${RUN}/tests/${id}
    Should Not Contain    ${{json.dumps($resource)}}    Tr0ub4dor&3

*** Keywords ***
Run The Shop Suite
    ${db} =    Fresh Store
    ${rc} =    Run Robot With Listener    ${TESTDATA}/shop    ${db}    --loglevel    TRACE
    Should Be Equal As Integers    ${rc}    5
    Start MCP Server    ${db}
    ${runs} =    Call Tool    list_runs
    Set Suite Variable    ${RUN}    ${runs}[runs][0][run_id]
