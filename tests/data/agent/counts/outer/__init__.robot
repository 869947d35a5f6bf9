*** Settings ***
Suite Teardown    Fail    outer teardown
