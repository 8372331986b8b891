; The bytecode in token.hex, assembled by hand from this listing (no
; compiler: RUNTIME_LEN is the runtime's length, 0x94, and RUNTIME_OFF the
; constructor's, 0x30; a label is a JUMPDEST and PUSH2 label its offset in
; the runtime).
;
; A minimal ERC-20 subset for the USDT watcher's chain tests: the deployer
; holds the whole supply; transfer(address,uint256) moves a balance and logs
; the standard Transfer(address indexed from, address indexed to, uint256
; value); balanceOf(address) reads one. Balances live at storage slot =
; holder address. No approve/transferFrom: the watcher reads only Transfer logs.
; Stack comments: top first.
; -- constructor --
PUSH32 00000000000000000000000000000000000000000000000000000000e8d4a51000 ; supply: 1,000,000 tokens of 6 decimals
CALLER          ; [deployer, supply]
SSTORE          ; balance[deployer] = supply
PUSH2 RUNTIME_LEN
DUP1
PUSH2 RUNTIME_OFF
PUSH1 00
CODECOPY        ; memory[0:len] = runtime
PUSH1 00
RETURN          ; deploy memory[0:len]
== runtime ==
PUSH1 00
CALLDATALOAD
PUSH1 e0
SHR             ; [selector]
DUP1
PUSH4 a9059cbb  ; transfer(address,uint256)
EQ
PUSH2 transfer
JUMPI
DUP1
PUSH4 70a08231  ; balanceOf(address)
EQ
PUSH2 balanceOf
JUMPI
fail:
PUSH1 00
DUP1
REVERT
transfer:
PUSH1 24
CALLDATALOAD    ; [v]
CALLER
SLOAD           ; [b, v]
DUP2
DUP2
LT              ; [b<v, b, v]
PUSH2 fail
JUMPI           ; revert when the balance is short
DUP2
SWAP1
SUB             ; [b-v, v]
CALLER
SSTORE          ; balance[caller] = b-v; [v]
PUSH1 04
CALLDATALOAD
PUSH20 ffffffffffffffffffffffffffffffffffffffff
AND             ; [to, v]
DUP1
SLOAD
DUP3
ADD             ; [tb+v, to, v]
DUP2
SSTORE          ; balance[to] += v; [to, v]
DUP2
PUSH1 00
MSTORE          ; memory[0:32] = v
CALLER          ; [caller, to, v]
PUSH32 ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef ; Transfer(address,address,uint256)
PUSH1 20
PUSH1 00
LOG3            ; Transfer(caller, to, v)
PUSH1 01
PUSH1 00
MSTORE
PUSH1 20
PUSH1 00
RETURN          ; true
balanceOf:
PUSH1 04
CALLDATALOAD
SLOAD
PUSH1 00
MSTORE
PUSH1 20
PUSH1 00
RETURN
