*** Settings ***
Documentation     Orders: where each step is written.
Metadata          Team    checkout
Suite Setup       Prepare Orders
Test Setup        Log    a test starts
Resource          common.resource
