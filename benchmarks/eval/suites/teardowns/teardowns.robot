*** Settings ***
Documentation     A test teardown that fails after a passing body, and a suite teardown failure.
Suite Teardown    Close Browser Session

*** Test Cases ***
Saves The Profile
    [Teardown]    Remove Uploaded Files
    Log    profile saved

*** Keywords ***
Remove Uploaded Files
    Log    removing /tmp/uploads/3f2a
    Fail    OSError: [Errno 13] Permission denied: '/tmp/uploads/3f2a/avatar.png'

Close Browser Session
    Fail    WebDriverException: Message: chrome not reachable
