; Ruby: classes (Rails' …Controller names are layered), Struct.new and Data.define, Rails and
; Sinatra routes, ActiveRecord queries, begin/rescue, blocks with parameters, lambdas and
; procs, Enumerable with blocks, RSpec/minitest tests, `enum`, singletons, threads, queues,
; mutexes, Enumerator, raw SQL. Conventions: see src/analysis/static_rules/mod.rs.

; ---- definitions
((class name: [(constant) (scope_resolution)] @name) @node (#set! type "class"))
((class name: [(constant) (scope_resolution)] @name) @node
  (#match? @name ".(Service|Repository|Controller|Handler|Factory)$")
  (#set! type "layered_class"))
((class name: (_) @name superclass: (superclass (call receiver: (constant) @s method: (identifier) @n))) @node
  (#eq? @s "Struct") (#eq? @n "new")
  (#set! type "struct"))
((assignment left: (constant) @name right: (call receiver: (constant) @s method: (identifier) @n)) @node
  (#eq? @s "Struct") (#eq? @n "new")
  (#set! type "struct"))
((assignment left: (constant) @name right: (call receiver: (constant) @s method: (identifier) @n)) @node
  (#eq? @s "Data") (#eq? @n "define")
  (#set! type "dataclass"))
((call method: (identifier) @e arguments: (argument_list . [(pair key: (hash_key_symbol) @name) (simple_symbol) @name])) @node
  (#eq? @e "enum")
  (#set! type "enum") (#set! name "{name|sym}"))
((method name: (identifier) @name) @node
  (#match? @name "^test_")
  (#set! type "test"))
((class name: (_) @name body: (body_statement (call method: (identifier) @i arguments: (argument_list (constant) @s)))) @node
  (#eq? @i "include") (#eq? @s "Singleton")
  (#set! type "singleton"))
((class name: (_) @name body: (body_statement (singleton_method name: (identifier) @m))) @node
  (#eq? @m "instance")
  (#set! type "singleton"))

; ---- routes (not in a spec, where `get "/x"` performs a request)
((call !receiver method: (identifier) @v arguments: (argument_list . (string (string_content) @path))) @node
  (#any-of? @v "get" "post" "put" "patch" "delete" "match")
  (#set! type "api_route") (#set! name "{v|upper} {path}") (#set! check "not_in_spec"))
((call !receiver method: (identifier) @v arguments: (argument_list . (simple_symbol) @s)) @node
  (#any-of? @v "resources" "resource")
  (#set! type "api_route") (#set! name "{v} {s|sym}"))
((call !receiver method: (identifier) @v) @node
  (#eq? @v "root")
  (#set! type "api_route") (#set! name "GET /"))

; ---- tests (RSpec, minitest)
((call method: (identifier) @f arguments: (argument_list . [(string (string_content) @name) (constant) @name (scope_resolution) @name]) block: [(do_block) (block)]) @node
  (#any-of? @f "describe" "context" "it" "specify" "scenario" "feature" "test")
  (#set! type "test"))

; ---- ActiveRecord
((call receiver: (constant) @r method: (identifier) @m) @node
  (#not-any-of? @r "Struct" "Data" "Thread" "Mutex" "Queue" "Monitor" "Ractor" "Enumerator" "Proc")
  (#any-of? @m "where" "find" "find_by" "all" "first" "last" "create" "joins" "includes" "order" "pluck"
     "count" "exists?" "find_or_create_by" "update_all" "delete_all" "destroy_all" "select" "limit" "group"
     "find_each" "find_by_sql")
  (#set! type "db_query") (#set! name "{r}.{m}"))
((call receiver: (constant) @r method: (identifier) @m) @node
  (#match? @m "^(find_by|create)!$")
  (#set! type "db_query") (#set! name "{r}.{m}"))
((call receiver: (_) @r method: (identifier) @name) @node
  (#not-match? @r "^[A-Z][A-Za-z0-9_:]*$")
  (#any-of? @name "where" "find_by" "joins" "includes" "pluck")
  (#set! type "db_query"))
((call !receiver method: (identifier) @name arguments: (argument_list)) @node
  (#any-of? @name "where" "find_by" "joins" "includes" "pluck")
  (#set! type "db_query"))
([(string) (heredoc_body)] @node
  (#set! type "db_query") (#set! check "sql"))

; ---- blocks, lambdas, Enumerable
((call method: (identifier) @callee block: [(do_block parameters: (block_parameters)) (block parameters: (block_parameters))] @node)
  (#set! type "closure") (#set! name "{callee}"))
((lambda) @node (#set! type "closure") (#set! name "lambda"))
((call !receiver method: (identifier) @l block: (_)) @node
  (#eq? @l "lambda")
  (#set! type "closure") (#set! name "lambda"))
((call !receiver method: (identifier) @l block: (_)) @node
  (#eq? @l "proc")
  (#set! type "closure") (#set! name "proc"))
((call receiver: (_) method: (identifier) @name block: [(do_block) (block)]) @node
  (#any-of? @name "map" "select" "reject" "each" "reduce" "inject" "each_with_object" "flat_map" "sum"
     "group_by" "sort_by" "detect" "each_with_index" "filter_map" "any?" "all?")
  (#set! type "higher_order_function"))
((call receiver: (_) method: (identifier) @name arguments: (argument_list . (block_argument))) @node
  (#any-of? @name "map" "select" "reject" "each" "reduce" "inject" "flat_map" "sum" "group_by" "sort_by"
     "detect" "filter_map" "any?" "all?")
  (#set! type "higher_order_function"))

; ---- errors
((begin) @node (#set! type "error_handling") (#set! name "begin/rescue"))
((rescue exceptions: (exceptions . (_) @e)) @node
  (#set! type "error_handling") (#set! name "rescue {e}"))
((rescue !exceptions) @node (#set! type "error_handling") (#set! name "rescue"))
((rescue_modifier) @node (#set! type "error_handling") (#set! name "rescue"))
((call !receiver method: (identifier) @r) @node
  (#eq? @r "rescue_from")
  (#set! type "error_handling") (#set! name "rescue_from"))

; ---- concurrency and friends
((call receiver: (constant) @c method: (identifier) @n) @node
  (#any-of? @c "Mutex" "Monitor") (#eq? @n "new")
  (#set! type "mutex") (#set! name "{c}"))
((call receiver: (constant) @c method: (identifier) @n) @node
  (#any-of? @c "Thread" "Ractor") (#eq? @n "new")
  (#set! type "spawned_task") (#set! name "{c}.new"))
((call method: (identifier) @n) @node
  (#eq? @n "perform_later")
  (#set! type "spawned_task") (#set! name "perform_later"))
((call receiver: (constant) @c method: (identifier) @n) @node
  (#any-of? @c "Queue" "SizedQueue") (#eq? @n "new")
  (#set! type "channel") (#set! name "Queue"))
((call receiver: (constant) @c method: (identifier) @n) @node
  (#eq? @c "Enumerator") (#eq? @n "new")
  (#set! type "generator") (#set! name "Enumerator"))
