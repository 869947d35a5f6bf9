*** Settings ***
Documentation     Acceptance tests: robot runs the test data with the listener in a
...               subprocess; what an agent sees is checked through rf-log-mcp over stdio.
