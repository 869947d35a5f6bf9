*** Test Cases ***
Order 1
    Log    order 1

Order 2
    Log    order 2

Order 3
    Log    order 3

Order 4
    Log    order 4

Order 5
    Log    order 5

Order 6
    Log    order 6

Order 7
    Log    order 7

Order 8
    Log    order 8

Order 9
    Log    order 9

Order 10
    Log    order 10

Order 11
    Log    order 11

Order 12
    Log    order 12

Order 13
    Log    order 13

Order 14
    Log    order 14

Order 15
    Log    order 15

Order 16
    Log    order 16

Order 17
    Log    order 17

Order 18
    Log    order 18

Order 19
    Log    order 19

Order 20
    Log    order 20

Order 21
    Log    order 21

Order 22
    Log    order 22

Order 23
    Log    order 23

Order 24
    Log    order 24

Order 25
    Log    order 25

Order 26
    Log    order 26

Order 27
    Log    order 27

Order 28
    Log    order 28

Order 29
    Log    order 29

Order 30
    Log    order 30

Order 31
    Log    order 31

Order 32
    Log    order 32

Order 33
    Log    order 33

Order 34
    Log    order 34

Order 35
    Log    order 35

Order 36
    Log    order 36

Order 37
    Log    order 37

Order 38
    Log    order 38

Order 39
    Log    order 39

Order 40
    Log    order 40
