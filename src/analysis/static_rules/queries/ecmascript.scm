; JavaScript, TypeScript and TSX (the patterns the three grammars share): React hooks,
; Next.js route exports and directives, Express/Hono/Fastify and NestJS routes, ORM queries,
; async/await, promise combinators, callbacks, classes, generators, decorators, tests and
; table tests (`test.each`), raw SQL. Conventions: see src/analysis/static_rules/mod.rs.

; ---- classes and functions
((class_declaration name: (_) @name) @node
  (#set! type "class"))
((class_declaration name: (_) @name) @node
  (#match? @name ".(Service|Repository|Controller|Handler|Factory)$")
  (#set! type "layered_class"))
((class_declaration name: (_) @name body: (class_body (method_definition "static" name: (property_identifier) @m))) @node
  (#eq? @m "getInstance")
  (#set! type "singleton"))
((generator_function_declaration name: (identifier) @name) @node
  (#set! type "generator"))
((method_definition "*" name: (_) @name) @node
  (#set! type "generator"))
((generator_function) @node
  (#set! type "generator") (#set! name "function*"))

; ---- React
((function_declaration name: (identifier) @name) @node
  (#match? @name "^use[A-Z]")
  (#set! type "react_hook"))
((variable_declarator name: (identifier) @name value: [(arrow_function) (function_expression)]) @node
  (#match? @name "^use[A-Z]")
  (#set! type "react_hook"))
((call_expression function: (identifier) @name) @node
  (#match? @name "^use[A-Z]")
  (#set! type "react_hook"))
((call_expression function: (member_expression object: (identifier) @r property: (property_identifier) @name)) @node
  (#eq? @r "React") (#match? @name "^use[A-Z]")
  (#set! type "react_hook"))

; ---- Next.js: route exports, directives, server actions
((export_statement declaration: (function_declaration name: (identifier) @name)) @node
  (#any-of? @name "GET" "POST" "PUT" "PATCH" "DELETE" "HEAD" "OPTIONS")
  (#set! type "api_route") (#set! check "next_route"))
((export_statement declaration: (lexical_declaration (variable_declarator name: (identifier) @name))) @node
  (#any-of? @name "GET" "POST" "PUT" "PATCH" "DELETE" "HEAD" "OPTIONS")
  (#set! type "api_route") (#set! check "next_route"))
((export_statement "default") @node
  (#set! type "api_route") (#set! check "pages_api_route"))
((expression_statement (string (string_fragment) @d)) @node
  (#eq? @d "use client")
  (#set! type "client_component") (#set! check "use_client"))
((expression_statement (string (string_fragment) @d)) @node
  (#eq? @d "use server")
  (#set! type "server_action") (#set! name "use server") (#set! check "prologue"))
((export_statement declaration: (function_declaration name: (identifier) @name)) @node
  (#set! type "server_action") (#set! check "use_server_file"))
((statement_block . (expression_statement (string (string_fragment) @d)) @node)
  (#eq? @d "use server")
  (#set! type "server_action") (#set! check "use_server_inline"))

; ---- async
((function_declaration "async" name: (identifier) @name) @node
  (#set! type "async_function"))
((method_definition "async" name: (_) @name) @node
  (#set! type "async_function"))
((variable_declarator name: (identifier) @name value: [(arrow_function "async") (function_expression "async")]) @node
  (#set! type "async_function"))
((assignment_expression left: (member_expression property: (property_identifier) @name)
   right: [(arrow_function "async") (function_expression "async")]) @node
  (#set! type "async_function"))
((await_expression (call_expression function: [(identifier) (member_expression)] @t)) @node
  (#set! type "await") (#set! name "{t|path}"))
((await_expression (new_expression constructor: (_) @t)) @node
  (#set! type "await") (#set! name "{t}"))
((await_expression [(identifier) (member_expression)] @t) @node
  (#set! type "await") (#set! name "{t|path}"))
((call_expression function: (member_expression object: (identifier) @p property: (property_identifier) @m)) @node
  (#eq? @p "Promise") (#any-of? @m "all" "allSettled" "race" "any")
  (#set! type "promise_combinator") (#set! name "Promise.{m}"))

; ---- routes
((call_expression
   function: (member_expression property: (property_identifier) @m)
   arguments: (arguments . (string (string_fragment) @route))) @node
  (#any-of? @m "get" "post" "put" "patch" "delete" "all" "options" "head")
  (#match? @route "^(/|\\*$)")
  (#set! type "api_route") (#set! name "{m|upper} {route}"))
((decorator (call_expression function: (identifier) @d arguments: (arguments . (string (string_fragment) @path)))) @node
  (#any-of? @d "Get" "Post" "Put" "Patch" "Delete" "All")
  (#set! type "api_route") (#set! name "{d|upper} {path}"))
((decorator (call_expression function: (identifier) @d arguments: (arguments . ")"))) @node
  (#any-of? @d "Get" "Post" "Put" "Patch" "Delete" "All")
  (#set! type "api_route") (#set! name "{d|upper}"))
((decorator [(identifier) @name (call_expression function: [(identifier) (member_expression)] @name)
             (member_expression) @name]) @node
  (#set! type "decorator"))

; ---- database
((call_expression function: (member_expression object: (_) @recv property: (property_identifier) @m)) @node
  (#any-of? @m "findMany" "findUnique" "findFirst" "findUniqueOrThrow" "findFirstOrThrow" "create" "createMany"
     "update" "updateMany" "upsert" "delete" "deleteMany" "count" "aggregate" "groupBy" "find" "findOne"
     "findById" "findAll" "findByPk" "findOneBy" "findBy" "save" "insertMany" "updateOne" "deleteOne"
     "select" "insert" "query" "execute" "$queryRaw" "$executeRaw" "countDocuments")
  (#match? @recv "^(prisma|db|tx|knex|pool|client|conn|connection|sql|em|entityManager|manager|dataSource|supabase)([.(]|$)|(Repository|Repo|Model)$")
  (#set! type "db_query") (#set! name "{recv|path}.{m}"))
((call_expression function: (member_expression object: (identifier) @recv property: (property_identifier) @m)) @node
  (#match? @recv "^[A-Z]")
  (#any-of? @m "find" "findOne" "findById" "findAll" "findByPk" "create" "aggregate" "countDocuments"
     "insertMany" "updateOne" "deleteOne")
  (#set! type "db_query") (#set! name "{recv}.{m}"))
([(string) (template_string)] @node
  (#set! type "db_query") (#set! check "sql"))

; ---- callbacks
((call_expression
   function: (member_expression property: (property_identifier) @name)
   arguments: (arguments . [(arrow_function) (function_expression) (identifier)])) @node
  (#any-of? @name "map" "filter" "reduce" "reduceRight" "flatMap" "forEach" "some" "every" "find" "findIndex" "sort")
  (#set! type "higher_order_function"))
((call_expression
   function: [(identifier) @callee (member_expression property: (property_identifier) @callee)]
   arguments: (arguments [(arrow_function) (function_expression)] @node))
  (#set! type "closure") (#set! name "{callee}"))
((new_expression constructor: (identifier) @callee arguments: (arguments [(arrow_function) (function_expression)] @node))
  (#set! type "closure") (#set! name "{callee}"))

; ---- errors
((try_statement) @node
  (#set! type "error_handling") (#set! name "try/catch"))
((call_expression function: (member_expression property: (property_identifier) @c)) @node
  (#eq? @c "catch")
  (#set! type "error_handling") (#set! name ".catch()"))

; ---- workers and locks
((new_expression constructor: (identifier) @c) @node
  (#eq? @c "Mutex")
  (#set! type "mutex") (#set! name "Mutex"))
((new_expression constructor: (identifier) @c) @node
  (#any-of? @c "Worker" "SharedWorker")
  (#set! type "spawned_task") (#set! name "{c}"))

; ---- tests (Jest, Vitest, Mocha, Playwright)
((call_expression
   function: (identifier) @f
   arguments: (arguments . [(string (string_fragment) @name) (template_string (string_fragment) @name)])) @node
  (#any-of? @f "describe" "it" "test")
  (#set! type "test"))
((call_expression
   function: (member_expression object: (identifier) @f property: (property_identifier) @m)
   arguments: (arguments . [(string (string_fragment) @name) (template_string (string_fragment) @name)])) @node
  (#any-of? @f "describe" "it" "test") (#not-eq? @m "each")
  (#set! type "test"))
; A table test has a table: `test.each([[1, 2], …])(title, fn)` or a tagged template table.
((call_expression
   function: (call_expression
     function: (member_expression object: [(identifier) (member_expression)] @f property: (property_identifier) @each)
     arguments: [(arguments . (array (_))) (template_string)])
   arguments: (arguments . [(string (string_fragment) @name) (template_string (string_fragment) @name)])) @node
  (#match? @f "^(describe|it|test)(\\.|$)") (#eq? @each "each")
  (#set! type "test"))
((call_expression
   function: (call_expression
     function: (member_expression object: [(identifier) (member_expression)] @f property: (property_identifier) @each)
     arguments: [(arguments . (array (_))) (template_string)])) @node
  (#match? @f "^(describe|it|test)(\\.|$)") (#eq? @each "each")
  (#set! type "table_test") (#set! name "{f}.each"))
