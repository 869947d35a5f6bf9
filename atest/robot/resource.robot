*** Settings ***
Library           Collections
Library           OperatingSystem
Library           ../resources/RfLogMcp.py

*** Variables ***
${TESTDATA}       ${CURDIR}/../testdata

*** Keywords ***
Fresh Store
    [Documentation]    A new, empty store in a folder of its own under the output directory
    ...    (kept with log.html as an artifact); returns its path.
    Create Directory    ${OUTPUT DIR}/stores
    ${dir} =    Evaluate    tempfile.mkdtemp(prefix="store-", dir=$OUTPUT_DIR + "/stores")
    ...    modules=tempfile
    RETURN    ${dir}/store.sqlite3

View
    [Arguments]    ${view}    &{arguments}
    ${response} =    Call Tool    get_view    run_id=${RUN}    view=${view}    &{arguments}
    Should Be True    ${response}[ok]    ${response}
    RETURN    ${response}[${view}]

Search
    [Arguments]    &{arguments}
    ${response} =    Call Tool    search_messages    run_id=${RUN}    &{arguments}
    Should Be True    ${response}[ok]    ${response}
    RETURN    ${response}

Test Id
    [Arguments]    ${name}
    [Documentation]    The id of the failed test called ${name}, from the summary.
    ${summary} =    View    summary    page_size=${200}    selector=failed
    FOR    ${test}    IN    @{summary}[failed_tests]
        IF    $test['name'] == $name    RETURN    ${test}[node_id]
    END
    Fail    No failed test named '${name}'
