*** Settings ***
Documentation     One very long message: a page source dumped when a check failed.

*** Test Cases ***
Page Shows Total
    ${source} =    Evaluate    "<div class='row'>" + "<span>item</span>" * 20000 + "<b id='total'>Total: 0.00</b></div>"
    Log    page source: ${source}
    Should Contain    ${source}    Total: 12.40    msg=total not shown; page source: ${source}
