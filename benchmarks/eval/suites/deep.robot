*** Settings ***
Documentation     Errors three user keyword levels down, beside passing tests.

*** Test Cases ***
Checkout With Card
    Open Shop
    Buy Item    sku-4411    2

Browse Catalogue
    Open Shop
    Log    42 items listed

Checkout With Voucher
    Open Shop
    Buy Item    sku-0007    1    voucher=SPRING

*** Keywords ***
Open Shop
    Log    shop opened

Buy Item
    [Arguments]    ${sku}    ${count}    ${voucher}=${None}
    Add To Basket    ${sku}    ${count}
    Pay    ${voucher}

Add To Basket
    [Arguments]    ${sku}    ${count}
    Log    added ${count} x ${sku}

Pay
    [Arguments]    ${voucher}
    Fill Payment Form    ${voucher}
    Confirm Payment

Fill Payment Form
    [Arguments]    ${voucher}
    Log    filling the form
    IF    $voucher
        Fail    Element 'css:#voucher-code' not visible after 10 s (voucher ${voucher})
    END

Confirm Payment
    Log    confirming
    Fail    Element 'css:#pay-button' not visible after 10 s
