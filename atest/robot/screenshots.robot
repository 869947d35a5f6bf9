*** Settings ***
Documentation     A SeleniumLibrary failure as an agent triages it: summary, failure path,
...               and the screenshot itself, returned by get_attachment as an image.
Resource          resource.robot
Suite Setup       Run The Web Test
Suite Teardown    Stop MCP Server

*** Test Cases ***
The Failure Path Says A Screenshot Exists And Get Attachment Returns It
    ${summary} =    View    summary
    Should Be Equal    ${summary}[failed_tests][0][message]    Element with locator 'id:confirm' not found.
    ${id} =    Test Id    Pay For The Order
    ${path} =    View    failure_path    selector=${id}
    ${step} =    Set Variable    ${path}[path][-1]
    Should Be Equal    ${step}[name]    Click Element
    ${shot} =    Set Variable    ${step}[attachments][0]
    Should Be Equal    ${shot}[kind]    image
    Should Be Equal    ${shot}[reference]    selenium-screenshot-1.png
    Should Be True    ${shot}[exists]
    ${image} =    Open Attachment    ${RUN}    ${shot}[message_id]    ${shot}[index]
    Should Be Equal    ${image}[mime_type]    image/png
    ${file} =    Get Binary File    ${OUTDIR}/selenium-screenshot-1.png
    Should Be Equal    ${image}[data]    ${file}

*** Keywords ***
Run The Web Test
    ${db} =    Fresh Store
    ${rc} =    Run Robot With Listener    ${TESTDATA}/screenshots/checkout.robot    ${db}
    Should Be Equal As Integers    ${rc}    1
    ${outdir} =    Evaluate    str(pathlib.Path($db).parent)    modules=pathlib
    Set Suite Variable    ${OUTDIR}    ${outdir}
    Start MCP Server    ${db}
    ${runs} =    Call Tool    list_runs
    Set Suite Variable    ${RUN}    ${runs}[runs][0][run_id]
