*** Settings ***
Documentation     A web test that fails where users' do: SeleniumLibrary in headless
...               Chromium cannot find an element and takes its screenshot on failure.
Library           SeleniumLibrary    run_on_failure=Capture Page Screenshot
Suite Teardown    Close All Browsers

*** Variables ***
${OPTIONS}        add_argument("--headless=new");add_argument("--no-sandbox");add_argument("--disable-dev-shm-usage");add_argument("--window-size=1024,700")

*** Test Cases ***
Pay For The Order
    Open Browser    file://${CURDIR}/page.html    headlesschrome    options=${OPTIONS}
    ...    executable_path=/usr/bin/chromedriver
    Element Text Should Be    id:total    Total: 42 EUR
    Click Element    id:confirm
