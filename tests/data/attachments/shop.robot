*** Settings ***
Documentation     Failures with screenshots, as users get them: SeleniumLibrary with headless
...               Chromium (its screenshot on failure), the Browser library's two message
...               shapes (Shots.py), and RF's own Log ... html=True.
Library           SeleniumLibrary    run_on_failure=Capture Page Screenshot
Library           OperatingSystem
Library           Shots.py
Suite Teardown    Close All Browsers

*** Variables ***
${OPTIONS}        add_argument("--headless=new");add_argument("--no-sandbox");add_argument("--disable-dev-shm-usage");add_argument("--window-size=1280,800")

*** Test Cases ***
Pay With Selenium
    [Documentation]    The element is not there: SeleniumLibrary takes a screenshot.
    Open Browser    file://${CURDIR}/page.html    headlesschrome    options=${OPTIONS}
    ...    executable_path=/usr/bin/chromedriver
    Click Element    id:confirm

Embedded Selenium Screenshot
    Capture Page Screenshot    EMBED
    Element Text Should Be    id:total    Total: 41 EUR

Browser Library Screenshots
    Browser Screenshot As File
    Browser Screenshot Embedded
    Fail    checkout page did not load

Links To Files
    Create File    ${OUTPUT DIR}/server.log    connection refused by db:5432\npassword=hunter2\n
    Log    <a href="server.log">server log</a> and <a href="https://example.com/run/42">the CI job</a> and <a href="../../etc/passwd">elsewhere</a>    html=True
    Log    *HTML* <b>bold</b> <video src="missing.mp4"></video>
    Fail    see the server log

Script Error
    [Documentation]    chromedriver's error: the message, then "Stacktrace:" and its native frames.
    Execute Javascript    throw new Error("checkout widget failed to load")
