; Go: type declarations and generics, goroutines, defer, channels (send, receive, select),
; sync primitives, `if err != nil` and error wrapping, routes, database calls, function
; literals and function-typed parameters, iota enums, tests and table tests, raw SQL.
; Conventions: see src/analysis/static_rules/mod.rs.

; ---- types
((type_spec name: (type_identifier) @name type: (struct_type)) @node
  (#set! type "struct"))
((type_spec name: (type_identifier) @name type: (struct_type)) @node
  (#match? @name ".(Service|Repository|Controller|Handler|Factory)$")
  (#set! type "layered_class"))
((type_spec name: (type_identifier) @name type: (interface_type)) @node
  (#set! type "interface"))
((type_spec name: (type_identifier) @name
   type: [(type_identifier) (qualified_type) (map_type) (slice_type) (array_type) (function_type)
          (pointer_type) (channel_type) (generic_type)]) @node
  (#set! type "type_alias"))
((type_alias name: (type_identifier) @name) @node
  (#set! type "type_alias"))

; A type parameter with a constraint other than `any` is bounded.
((type_parameter_declaration name: (identifier) @p type: (type_constraint) @c) @node
  (#not-eq? @c "any")
  (#set! type "generic")
  (#set! name "bounded {p} {c}"))
((type_parameter_declaration name: (identifier) @p type: (type_constraint) @c) @node
  (#eq? @c "any")
  (#set! type "generic")
  (#set! name "unbounded {p}"))

; `Red Color = iota` names the enum type; a bare `Red = iota` does not.
((const_spec type: (_) @name value: (expression_list [(iota) (binary_expression (iota))])) @node
  (#set! type "enum"))
((const_spec !type value: (expression_list [(iota) (binary_expression (iota))])) @node
  (#set! type "enum")
  (#set! name "iota"))

; ---- functions
((function_declaration name: (identifier) @name) @node
  (#match? @name "^(Test|Benchmark|Fuzz|Example)")
  (#set! type "test")
  (#set! check "go_test"))
((function_declaration name: (identifier) @name
   parameters: (parameter_list (parameter_declaration type: (function_type)))) @node
  (#set! type "higher_order_function"))
((method_declaration name: (field_identifier) @name
   parameters: (parameter_list (parameter_declaration type: (function_type)))) @node
  (#set! type "higher_order_function"))

; Function literals: passed to a call (named by the callee), or bound, returned, started.
((call_expression
   function: [(identifier) @callee (selector_expression field: (field_identifier) @callee)]
   arguments: (argument_list (func_literal) @node))
  (#set! type "closure")
  (#set! name "{callee}"))
((short_var_declaration right: (expression_list (func_literal) @node))
  (#set! type "closure") (#set! name "func literal"))
((assignment_statement right: (expression_list (func_literal) @node))
  (#set! type "closure") (#set! name "func literal"))
((var_spec value: (expression_list (func_literal) @node))
  (#set! type "closure") (#set! name "func literal"))
((return_statement (expression_list (func_literal) @node))
  (#set! type "closure") (#set! name "func literal"))
((go_statement (call_expression function: (func_literal) @node))
  (#set! type "closure") (#set! name "func literal"))
((defer_statement (call_expression function: (func_literal) @node))
  (#set! type "closure") (#set! name "func literal"))

; ---- concurrency
((go_statement (call_expression function: (func_literal))) @node
  (#set! type "goroutine") (#set! name "go func"))
((go_statement (call_expression function: [(identifier) (selector_expression)] @target)) @node
  (#set! type "goroutine") (#set! name "{target}"))
((defer_statement (call_expression function: (func_literal))) @node
  (#set! type "defer") (#set! name "defer func"))
((defer_statement (call_expression function: [(identifier) (selector_expression)] @target)) @node
  (#set! type "defer") (#set! name "defer {target}"))
((call_expression function: (identifier) @f arguments: (argument_list . (channel_type))) @node
  (#eq? @f "make")
  (#set! type "channel") (#set! name "make(chan)"))
((send_statement) @node
  (#set! type "channel") (#set! name "send"))
((unary_expression operator: "<-") @node
  (#set! type "channel") (#set! name "receive"))
((select_statement) @node
  (#set! type "channel") (#set! name "select"))
((qualified_type package: (package_identifier) @pkg name: (type_identifier) @t) @node
  (#eq? @pkg "sync") (#any-of? @t "Mutex" "RWMutex")
  (#set! type "mutex") (#set! name "sync.{t}"))
((qualified_type package: (package_identifier) @pkg name: (type_identifier) @t) @node
  (#eq? @pkg "sync") (#eq? @t "Once")
  (#set! type "singleton") (#set! name "sync.Once"))
((qualified_type package: (package_identifier) @pkg name: (type_identifier) @t) @node
  (#eq? @pkg "sync") (#eq? @t "WaitGroup")
  (#set! type "promise_combinator") (#set! name "sync.WaitGroup"))
((qualified_type package: (package_identifier) @pkg) @node
  (#eq? @pkg "errgroup")
  (#set! type "promise_combinator") (#set! name "errgroup"))
((selector_expression operand: (identifier) @pkg) @node
  (#eq? @pkg "errgroup")
  (#set! type "promise_combinator") (#set! name "errgroup"))

; ---- errors
((binary_expression left: (identifier) @e operator: "!=" right: (nil)) @node
  (#eq? @e "err")
  (#set! type "error_handling") (#set! name "if err != nil"))
((call_expression function: (selector_expression operand: (identifier) @p field: (field_identifier) @f)) @node
  (#eq? @p "errors") (#any-of? @f "Is" "As")
  (#set! type "error_handling") (#set! name "errors.{f}"))
((call_expression function: (identifier) @f) @node
  (#eq? @f "recover")
  (#set! type "error_handling") (#set! name "recover"))
((call_expression
   function: (selector_expression operand: (identifier) @p field: (field_identifier) @f)
   arguments: (argument_list . [(interpreted_string_literal) (raw_string_literal)] @fmt)) @node
  (#eq? @p "fmt") (#eq? @f "Errorf") (#match? @fmt "%w")
  (#set! type "error_handling") (#set! name "fmt.Errorf %w"))

; ---- routes (Gin, Echo, Fiber, chi, net/http)
((call_expression
   function: (selector_expression field: (field_identifier) @m)
   arguments: (argument_list . (interpreted_string_literal (interpreted_string_literal_content) @route))) @node
  (#any-of? @m "GET" "POST" "PUT" "PATCH" "DELETE" "Get" "Post" "Put" "Patch" "Delete" "Options")
  (#match? @route "^/")
  (#set! type "api_route") (#set! name "{m|upper} {route}"))
((call_expression
   function: (selector_expression field: (field_identifier) @m)
   arguments: (argument_list . (interpreted_string_literal (interpreted_string_literal_content) @route))) @node
  (#any-of? @m "Handle" "HandleFunc" "Any")
  (#match? @route "^/")
  (#set! type "api_route") (#set! name "ANY {route}"))
((call_expression
   function: (selector_expression field: (field_identifier) @m)
   arguments: (argument_list . (interpreted_string_literal (interpreted_string_literal_content) @route))) @node
  (#any-of? @m "Handle" "HandleFunc")
  (#match? @route "^[A-Z]+ /")
  (#set! type "api_route") (#set! name "{route}"))

; ---- database (GORM, database/sql)
((call_expression
   function: (selector_expression operand: [(identifier) (selector_expression)] @recv field: (field_identifier) @m)) @node
  (#any-of? @m "Find" "First" "Last" "Take" "Where" "Create" "Save" "Delete" "Updates" "Model" "Raw" "Exec"
     "Query" "QueryRow" "QueryContext" "QueryRowContext" "ExecContext" "Preload" "Select")
  (#match? @recv "(^|\\.)([A-Za-z_]*([Dd][Bb])[A-Za-z_0-9]*|tx|conn|gorm|pool)$")
  (#set! type "db_query") (#set! name "{recv}.{m}"))
([(interpreted_string_literal) (raw_string_literal)] @node
  (#set! type "db_query") (#set! check "sql"))

; ---- tests
((call_expression
   function: (selector_expression operand: (identifier) @t field: (field_identifier) @run)
   arguments: (argument_list . (interpreted_string_literal (interpreted_string_literal_content) @name))) @node
  (#eq? @t "t") (#eq? @run "Run")
  (#set! type "test"))
((for_statement (range_clause right: (_) @table) body: (block)) @node
  (#set! type "table_test") (#set! check "go_table_test"))
