; Rust: items (struct, enum, trait, type alias), trait impls (`impl Iterator for`, `Drop`),
; generic parameters with and without a bound, lifetimes, `#[derive]` lists, async fns and
; `.await`, `?` named by what the function returns, `Result` returns, tasks, channels, locks,
; one-time statics, closures and iterator adaptors, axum/actix routes, sqlx/Diesel/SeaORM
; queries, `#[test]` functions and raw SQL. Conventions: see src/analysis/static_rules/mod.rs.

; ---- items
((struct_item name: (type_identifier) @name) @node
  (#set! type "struct"))
((struct_item name: (type_identifier) @name) @node
  (#match? @name ".(Service|Repository|Controller|Handler|Factory)$")
  (#set! type "layered_class"))
((enum_item name: (type_identifier) @name) @node
  (#set! type "enum"))
((trait_item name: (type_identifier) @name) @node
  (#set! type "trait"))
((type_item name: (type_identifier) @name) @node
  (#set! type "type_alias"))

; Trait impls: `impl Iterator for Lexer<'a>`, `impl fmt::Display for Quoted<C>`.
((impl_item trait: (_) @t type: (_) @ty) @node
  (#set! type "trait_impl") (#set! name "{t} for {ty}"))
; A type's own cleanup (issue 31).
((impl_item trait: (type_identifier) @t type: [(type_identifier) @ty (generic_type type: (type_identifier) @ty)]) @node
  (#eq? @t "Drop")
  (#set! type "context_manager") (#set! name "Drop for {ty}"))

; Generic parameters: bounded inline (`T: Display`) or in a where clause, or unbounded.
((type_parameter name: (type_identifier) @p bounds: (trait_bounds) @b) @node
  (#set! type "generic") (#set! name "bounded {p}{b}"))
((type_parameter name: (type_identifier) @p !bounds) @node
  (#set! type "generic") (#set! check "rust_where_bound"))

((lifetime) @name @node
  (#set! type "lifetime"))

((attribute_item (attribute (identifier) @d arguments: (token_tree) @list)) @node
  (#eq? @d "derive")
  (#set! type "derive_macro") (#set! check "rust_derive"))

; ---- functions
((function_item (function_modifiers) @mods name: (identifier) @name) @node
  (#match? @mods "async")
  (#set! type "async_function"))
((function_item name: (identifier) @name) @node
  (#set! type "test") (#set! check "rust_test"))
((function_item
   return_type: [(generic_type type: [(type_identifier) (scoped_type_identifier)] @r)
                 (type_identifier) @r (scoped_type_identifier) @r]) @node
  (#match? @r "Result$")
  (#set! type "error_handling") (#set! name "Result"))
((function_item name: (identifier) @name
   type_parameters: (type_parameters (type_parameter bounds: (trait_bounds (function_type))))) @node
  (#set! type "higher_order_function"))
((function_item name: (identifier) @name
   (where_clause (where_predicate bounds: (trait_bounds (function_type))))) @node
  (#set! type "higher_order_function"))
((function_item name: (identifier) @name
   parameters: (parameters (parameter type: [(abstract_type (function_type))
                                             (reference_type (dynamic_type (function_type)))
                                             (function_type)]))) @node
  (#set! type "higher_order_function"))

; ---- errors and await
((try_expression) @node
  (#set! type "error_handling") (#set! check "rust_try"))
((call_expression function: (field_expression field: (field_identifier) @f)) @node
  (#eq? @f "map_err")
  (#set! type "error_handling") (#set! name "map_err"))
((await_expression (call_expression function: (field_expression value: (call_expression) field: (field_identifier) @t))) @node
  (#set! type "await") (#set! name "{t}"))
((await_expression (call_expression function: (field_expression value: (generic_function) field: (field_identifier) @t))) @node
  (#set! type "await") (#set! name "{t}"))
((await_expression (call_expression function: [(identifier) (scoped_identifier)
   (field_expression value: [(identifier) (self) (field_expression)])] @t)) @node
  (#set! type "await") (#set! name "{t}"))
((await_expression [(identifier) (field_expression)] @t) @node
  (#set! type "await") (#set! name "{t}"))

; ---- closures and higher-order calls
((call_expression
   function: [(identifier) @callee (field_expression field: (field_identifier) @callee)
              (scoped_identifier name: (identifier) @callee)]
   arguments: (arguments (closure_expression) @node))
  (#set! type "closure") (#set! name "{callee}"))
((let_declaration value: (closure_expression) @node)
  (#set! type "closure") (#set! name "closure"))
((call_expression
   function: (field_expression field: (field_identifier) @name)
   arguments: (arguments . [(closure_expression) (scoped_identifier)])) @node
  (#any-of? @name "map" "filter" "filter_map" "flat_map" "fold" "for_each" "any" "all" "find" "find_map"
     "and_then" "reduce" "take_while" "skip_while" "position" "max_by_key" "min_by_key" "sort_by"
     "sort_by_key" "retain")
  (#set! type "higher_order_function"))

; ---- tasks, combinators, channels, locks, one-time statics
((call_expression function: (scoped_identifier) @p) @node
  (#match? @p "(^|::)(tokio|task|thread|rayon)::spawn$")
  (#set! type "spawned_task") (#set! name "{p|tail2}"))
((call_expression function: (scoped_identifier name: (identifier) @n)) @node
  (#any-of? @n "spawn_blocking" "spawn_local")
  (#set! type "spawned_task") (#set! name "{n}"))
((macro_invocation macro: [(identifier) (scoped_identifier)] @m) @node
  (#match? @m "(^|::)(join|try_join|select)$")
  (#set! type "promise_combinator") (#set! name "{m}!"))
((call_expression function: [(identifier) @n (scoped_identifier name: (identifier) @n)]) @node
  (#any-of? @n "join_all" "try_join_all" "select_all")
  (#set! type "promise_combinator") (#set! name "{n}"))
((call_expression function: (scoped_identifier path: (_) name: (identifier) @n) @p) @node
  (#any-of? @n "channel" "unbounded_channel" "sync_channel" "bounded" "unbounded")
  (#set! type "channel") (#set! name "{p|tail2}"))
((scoped_identifier path: (identifier) @t name: (identifier) @n) @node
  (#any-of? @t "Mutex" "RwLock") (#eq? @n "new")
  (#set! type "mutex") (#set! name "{t}"))
((generic_type type: [(type_identifier) @t (scoped_type_identifier name: (type_identifier) @t)]) @node
  (#any-of? @t "Mutex" "RwLock")
  (#set! type "mutex") (#set! name "{t}"))
((static_item name: (identifier) @name
   type: (generic_type type: [(type_identifier) @k (scoped_type_identifier name: (type_identifier) @k)])) @node
  (#any-of? @k "OnceLock" "OnceCell" "LazyLock" "Lazy")
  (#set! type "singleton"))
((macro_invocation macro: (identifier) @m) @node
  (#any-of? @m "lazy_static" "thread_local")
  (#set! type "singleton") (#set! name "{m}!"))

; ---- routes (axum `.route(path, get(h).post(h))`, actix attributes)
((call_expression
   function: (field_expression field: (field_identifier) @r)
   arguments: (arguments . (string_literal (string_content) @path)
     (call_expression function: (identifier) @verb))) @node
  (#eq? @r "route") (#any-of? @verb "get" "post" "put" "patch" "delete")
  (#set! type "api_route") (#set! name "{verb|upper} {path}"))
((call_expression
   function: (field_expression field: (field_identifier) @r)
   arguments: (arguments . (string_literal (string_content) @path)
     (call_expression function: (field_expression field: (field_identifier) @verb)))) @node
  (#eq? @r "route") (#any-of? @verb "get" "post" "put" "patch" "delete")
  (#set! type "api_route") (#set! name "{verb|upper} {path}"))
((call_expression
   function: (field_expression field: (field_identifier) @r)
   arguments: (arguments . (string_literal (string_content) @path)
     (call_expression function: (field_expression value: (call_expression function: (identifier) @verb))))) @node
  (#eq? @r "route") (#any-of? @verb "get" "post" "put" "patch" "delete")
  (#set! type "api_route") (#set! name "{verb|upper} {path}"))
((attribute_item (attribute (identifier) @verb arguments: (token_tree . (string_literal (string_content) @path)))) @node
  (#any-of? @verb "get" "post" "put" "patch" "delete")
  (#set! type "api_route") (#set! name "{verb|upper} {path}"))

; ---- database
((call_expression function: [(scoped_identifier) @p (generic_function function: (scoped_identifier) @p)]) @node
  (#match? @p "^sqlx::query(_as|_scalar)?$")
  (#set! type "db_query") (#set! name "{p}"))
((call_expression function: [(identifier) @p (generic_function function: (identifier) @p)]) @node
  (#any-of? @p "query" "query_as" "query_scalar")
  (#set! type "db_query") (#set! name "{p}"))
((macro_invocation macro: [(identifier) (scoped_identifier)] @m) @node
  (#match? @m "^(sqlx::)?query(_as|_scalar)?$")
  (#set! type "db_query") (#set! name "{m}!"))
((call_expression function: [(field_expression field: (field_identifier) @name)
                             (generic_function function: (field_expression field: (field_identifier) @name))]) @node
  (#any-of? @name "fetch_one" "fetch_all" "fetch_optional" "fetch" "get_result" "get_results" "load")
  (#set! type "db_query"))
((call_expression function: (scoped_identifier path: (identifier) @d name: (identifier) @n) @p) @node
  (#eq? @d "diesel") (#any-of? @n "insert_into" "update" "delete")
  (#set! type "db_query") (#set! name "{p}"))
((call_expression function: (scoped_identifier path: (identifier) @e name: (identifier) @n) @p) @node
  (#match? @e "Entity$") (#any-of? @n "find" "find_by_id" "insert")
  (#set! type "db_query") (#set! name "{p}"))
([(string_literal) (raw_string_literal)] @node
  (#set! type "db_query") (#set! check "sql"))
