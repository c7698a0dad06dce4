; Java: type declarations (records count as data classes), annotations (Spring mappings and
; JAX-RS routes, JUnit tests and parameterized tests, @Async, JPA @Query, the rest as
; decorators), Spring Data repositories and JPA/JDBC calls, try/catch/throws and
; try-with-resources, CompletableFuture and executors, synchronized and locks, lambdas and
; streams, singletons, blocking queues, generics and raw SQL.
; Conventions: see src/analysis/static_rules/mod.rs.

; ---- types
((class_declaration name: (identifier) @name) @node (#set! type "class"))
((interface_declaration name: (identifier) @name) @node (#set! type "interface"))
((enum_declaration name: (identifier) @name) @node (#set! type "enum"))
((record_declaration name: (identifier) @name) @node (#set! type "dataclass"))
([(class_declaration name: (identifier) @name) (interface_declaration name: (identifier) @name)] @node
  (#match? @name ".(Service|Repository|Controller|Handler|Factory)$")
  (#set! type "layered_class"))
((interface_declaration (extends_interfaces (type_list (generic_type (type_identifier) @name)))) @node
  (#any-of? @name "JpaRepository" "CrudRepository" "PagingAndSortingRepository" "MongoRepository" "ReactiveCrudRepository")
  (#set! type "db_query"))
((type_parameter (type_identifier) @p (type_bound) @b) @node
  (#set! type "generic") (#set! name "bounded {p} {b}"))
((type_parameter . (type_identifier) @p .) @node
  (#set! type "generic") (#set! name "unbounded {p}"))

; ---- annotations
([(marker_annotation name: (identifier) @name) (annotation name: (identifier) @name)] @node
  (#set! type "decorator"))
((marker_annotation name: (identifier) @m) @node
  (#any-of? @m "GetMapping" "PostMapping" "PutMapping" "PatchMapping" "DeleteMapping" "RequestMapping")
  (#set! type "api_route") (#set! name "{m|verb}"))
((annotation name: (identifier) @m
   arguments: (annotation_argument_list [(string_literal (string_fragment) @path)
                                         (element_value_pair value: (string_literal (string_fragment) @path))])) @node
  (#any-of? @m "GetMapping" "PostMapping" "PutMapping" "PatchMapping" "DeleteMapping" "RequestMapping")
  (#set! type "api_route") (#set! name "{m|verb} {path}"))
((annotation name: (identifier) @name) @node
  (#eq? @name "Query")
  (#set! type "db_query") (#set! name "@Query"))
([(marker_annotation name: (identifier) @name) (annotation name: (identifier) @name)] @node
  (#any-of? @name "GET" "POST" "PUT" "PATCH" "DELETE")
  (#set! type "api_route"))
((annotation name: (identifier) @p arguments: (annotation_argument_list (string_literal (string_fragment) @path))) @node
  (#eq? @p "Path")
  (#set! type "api_route") (#set! name "ROUTE {path}"))

; ---- methods
((method_declaration
   (modifiers [(marker_annotation name: (identifier) @a) (annotation name: (identifier) @a)])
   name: (identifier) @name) @node
  (#any-of? @a "Test" "ParameterizedTest" "RepeatedTest" "TestFactory")
  (#set! type "test"))
; A table test has a table: @ParameterizedTest with its source of rows.
((method_declaration
   (modifiers (marker_annotation name: (identifier) @p)
              (annotation name: (identifier) @src))
   name: (identifier) @name) @node
  (#eq? @p "ParameterizedTest")
  (#any-of? @src "ValueSource" "CsvSource" "MethodSource" "EnumSource" "CsvFileSource" "ArgumentsSource")
  (#set! type "table_test"))
((method_declaration (modifiers (marker_annotation name: (identifier) @a)) name: (identifier) @name) @node
  (#eq? @a "Async")
  (#set! type "async_function"))
((method_declaration type: (generic_type (type_identifier) @t) name: (identifier) @name) @node
  (#eq? @t "CompletableFuture")
  (#set! type "async_function"))
((method_declaration name: (identifier) (throws)) @node
  (#set! type "error_handling") (#set! name "throws"))
((method_declaration (modifiers) @mods) @node
  (#match? @mods "synchronized")
  (#set! type "mutex") (#set! name "synchronized"))

; ---- statements
((try_statement) @node (#set! type "error_handling") (#set! name "try/catch"))
((try_with_resources_statement) @node (#set! type "error_handling") (#set! name "try/catch"))
((try_with_resources_statement) @node (#set! type "context_manager") (#set! name "try-with-resources"))
((catch_clause (catch_formal_parameter (catch_type . (_) @e))) @node
  (#set! type "error_handling") (#set! name "catch {e}"))
((synchronized_statement) @node (#set! type "mutex") (#set! name "synchronized"))
([(type_identifier) @t (generic_type (type_identifier) @t)] @node
  (#any-of? @t "ReentrantLock" "ReadWriteLock" "ReentrantReadWriteLock")
  (#set! type "mutex") (#set! name "{t}"))
((generic_type (type_identifier) @t) @node
  (#match? @t "BlockingQueue$")
  (#set! type "channel") (#set! name "BlockingQueue"))
((object_creation_expression type: (type_identifier) @t) @node
  (#eq? @t "Thread")
  (#set! type "spawned_task") (#set! name "Thread"))
((method_invocation object: (identifier) @o name: (identifier) @m) @node
  (#eq? @o "Thread") (#eq? @m "ofVirtual")
  (#set! type "spawned_task") (#set! name "Thread.ofVirtual"))
((method_invocation object: (identifier) @o name: (identifier) @m) @node
  (#eq? @o "Executors") (#match? @m "^new")
  (#set! type "spawned_task") (#set! name "ExecutorService"))
((method_invocation object: (identifier) @o name: (identifier) @m) @node
  (#eq? @o "CompletableFuture") (#any-of? @m "supplyAsync" "runAsync")
  (#set! type "spawned_task") (#set! name "CompletableFuture.{m}"))
((method_invocation object: (_) @o name: (identifier) @m) @node
  (#match? @o "(?i)executor$") (#any-of? @m "submit" "execute")
  (#set! type "spawned_task") (#set! name "{o}.{m}"))
((method_invocation object: (identifier) @o name: (identifier) @m) @node
  (#eq? @o "CompletableFuture") (#any-of? @m "allOf" "anyOf")
  (#set! type "promise_combinator") (#set! name "CompletableFuture.{m}"))
((class_declaration name: (identifier) @name
   body: (class_body (field_declaration (modifiers) @mods declarator: (variable_declarator name: (identifier) @f)))) @node
  (#match? @mods "static") (#any-of? @f "INSTANCE" "instance")
  (#set! type "singleton"))
((class_declaration name: (identifier) @name
   body: (class_body (method_declaration (modifiers) @mods name: (identifier) @m))) @node
  (#match? @mods "static") (#eq? @m "getInstance")
  (#set! type "singleton"))

; ---- lambdas and streams
((method_invocation name: (identifier) @callee arguments: (argument_list (lambda_expression) @node))
  (#set! type "closure") (#set! name "{callee}"))
((object_creation_expression type: [(type_identifier) @callee (generic_type (type_identifier) @callee)]
   arguments: (argument_list (lambda_expression) @node))
  (#set! type "closure") (#set! name "{callee}"))
((method_invocation name: (identifier) @name arguments: (argument_list . [(lambda_expression) (method_reference)])) @node
  (#any-of? @name "map" "filter" "reduce" "flatMap" "forEach" "anyMatch" "allMatch" "noneMatch" "sorted"
     "thenApply" "thenCompose" "computeIfAbsent")
  (#set! type "higher_order_function"))

; ---- database
((method_invocation object: [(identifier) (field_access)] @o name: (identifier) @m) @node
  (#match? @o "(?i)(repository|repo)$") (#match? @m "^(find|save|delete|count|exists)")
  (#set! type "db_query") (#set! name "{o}.{m}"))
((method_invocation object: [(identifier) (field_access)] @o name: (identifier) @m) @node
  (#match? @o "(?i)(^|\\.)(entitymanager|em)$")
  (#any-of? @m "createQuery" "createNativeQuery" "persist" "merge" "find" "remove")
  (#set! type "db_query") (#set! name "{o}.{m}"))
((method_invocation object: [(identifier) (field_access)] @o name: (identifier) @m) @node
  (#match? @o "(?i)jdbctemplate$")
  (#any-of? @m "query" "update" "queryForObject" "queryForList")
  (#set! type "db_query") (#set! name "{o}.{m}"))
((string_literal) @node (#set! type "db_query") (#set! check "sql"))
