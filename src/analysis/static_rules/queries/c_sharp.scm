; C#: type declarations (records count as data classes), attributes (ASP.NET routes, xUnit/
; NUnit/MSTest tests and [Theory] with its [InlineData] rows, the rest as decorators),
; minimal-API `app.MapGet`, async/await and Task.WhenAll, Task.Run and threads, `lock`,
; `using`, Entity Framework, lambdas and LINQ, singletons, `yield return`, generics, raw SQL.
; Conventions: see src/analysis/static_rules/mod.rs.

; ---- types
((class_declaration name: (identifier) @name) @node (#set! type "class"))
((interface_declaration name: (identifier) @name) @node (#set! type "interface"))
((struct_declaration name: (identifier) @name) @node (#set! type "struct"))
((enum_declaration name: (identifier) @name) @node (#set! type "enum"))
((record_declaration name: (identifier) @name) @node (#set! type "dataclass"))
([(class_declaration name: (identifier) @name) (interface_declaration name: (identifier) @name)
  (struct_declaration name: (identifier) @name) (record_declaration name: (identifier) @name)] @node
  (#match? @name ".(Service|Repository|Controller|Handler|Factory)$")
  (#set! type "layered_class"))
((class_declaration (base_list (_) @b)) @node
  (#eq? @b "DbContext")
  (#set! type "db_query") (#set! name "DbContext"))
((using_directive name: (identifier) @name) @node (#set! type "type_alias"))
((type_parameter_constraints_clause . (identifier) @p) @node
  (#set! type "generic") (#set! name "bounded {p}"))
((type_parameter name: (identifier) @p) @node
  (#set! type "generic") (#set! check "csharp_unbounded"))

; ---- attributes
((attribute name: (identifier) @name) @node (#set! type "decorator"))
((attribute name: (identifier) @a (attribute_argument_list (attribute_argument (string_literal (string_literal_content) @path)))) @node
  (#any-of? @a "HttpGet" "HttpPost" "HttpPut" "HttpPatch" "HttpDelete")
  (#set! type "api_route") (#set! name "{a|verb} {path}"))
((attribute name: (identifier) @a !arguments) @node
  (#any-of? @a "HttpGet" "HttpPost" "HttpPut" "HttpPatch" "HttpDelete")
  (#set! type "api_route") (#set! name "{a|verb}"))
((method_declaration (attribute_list (attribute name: (identifier) @a)) name: (identifier) @name) @node
  (#any-of? @a "Fact" "Theory" "Test" "TestMethod" "TestCase" "DataTestMethod")
  (#set! type "test"))
; A table test has a table: [Theory] (or a data test) with its rows.
((method_declaration (attribute_list (attribute name: (identifier) @rows)) name: (identifier) @name) @node
  (#any-of? @rows "InlineData" "MemberData" "ClassData" "TestCase" "DataRow" "TestCaseSource")
  (#set! type "table_test"))

; ---- methods and statements
((method_declaration (modifier) @m name: (identifier) @name) @node
  (#eq? @m "async")
  (#set! type "async_function"))
((await_expression (invocation_expression function: [(identifier) (member_access_expression)] @t)) @node
  (#set! type "await") (#set! name "{t|path}"))
((await_expression [(identifier) (member_access_expression)] @t) @node
  (#set! type "await") (#set! name "{t}"))
((foreach_statement "await") @node (#set! type "await") (#set! name "foreach"))
((try_statement) @node (#set! type "error_handling") (#set! name "try/catch"))
((catch_clause (catch_declaration type: (_) @e)) @node
  (#set! type "error_handling") (#set! name "catch {e}"))
((lock_statement) @node (#set! type "mutex") (#set! name "lock"))
((yield_statement "return") @node (#set! type "generator") (#set! name "yield return"))
((using_statement) @node (#set! type "context_manager") (#set! name "using"))
((local_declaration_statement "using") @node (#set! type "context_manager") (#set! name "using"))
((class_declaration name: (identifier) @name
   body: (declaration_list [(property_declaration (modifier) @s name: (identifier) @f)
                            (field_declaration (modifier) @s (variable_declaration (variable_declarator name: (identifier) @f)))])) @node
  (#eq? @s "static") (#any-of? @f "Instance" "_instance" "instance")
  (#set! type "singleton"))
((invocation_expression function: (member_access_expression name: [(identifier) (generic_name)] @n)) @node
  (#match? @n "^AddSingleton")
  (#set! type "singleton") (#set! name "AddSingleton"))

; ---- tasks, combinators, channels
((invocation_expression function: (member_access_expression expression: (identifier) @o name: (identifier) @m)) @node
  (#eq? @o "Task") (#any-of? @m "WhenAll" "WhenAny")
  (#set! type "promise_combinator") (#set! name "Task.{m}"))
((invocation_expression function: (member_access_expression expression: (identifier) @o name: (identifier) @m)) @node
  (#eq? @o "Parallel") (#any-of? @m "ForEach" "ForEachAsync" "For")
  (#set! type "promise_combinator") (#set! name "Parallel.{m}"))
((invocation_expression function: (member_access_expression expression: (identifier) @o name: (identifier) @m)) @node
  (#eq? @o "Task") (#eq? @m "Run")
  (#set! type "spawned_task") (#set! name "Task.Run"))
((invocation_expression function: (member_access_expression expression: (_) @o name: (identifier) @m)) @node
  (#eq? @o "Task.Factory") (#eq? @m "StartNew")
  (#set! type "spawned_task") (#set! name "Task.Factory.StartNew"))
((object_creation_expression type: (identifier) @t) @node
  (#eq? @t "Thread")
  (#set! type "spawned_task") (#set! name "Thread"))
((object_creation_expression type: (identifier) @t) @node
  (#eq? @t "Mutex")
  (#set! type "mutex") (#set! name "Mutex"))
([(identifier) @t] @node
  (#eq? @t "SemaphoreSlim")
  (#set! type "mutex") (#set! name "SemaphoreSlim"))
((invocation_expression function: (member_access_expression expression: (identifier) @o name: [(identifier) (generic_name)] @m)) @node
  (#eq? @o "Channel") (#match? @m "^Create")
  (#set! type "channel") (#set! name "Channel"))

; ---- routes, EF, LINQ, lambdas
((invocation_expression function: (member_access_expression name: (identifier) @m)
   arguments: (argument_list . (argument (string_literal (string_literal_content) @path)))) @node
  (#any-of? @m "MapGet" "MapPost" "MapPut" "MapPatch" "MapDelete")
  (#set! type "api_route") (#set! check "csharp_map"))
((invocation_expression function: (member_access_expression name: (identifier) @name)) @node
  (#any-of? @name "ToListAsync" "FirstOrDefaultAsync" "SingleOrDefaultAsync" "FindAsync" "SaveChanges"
     "SaveChangesAsync" "FromSqlRaw" "FromSqlInterpolated" "ExecuteSqlRaw" "Include" "AnyAsync" "CountAsync"
     "AddAsync" "ExecuteUpdateAsync")
  (#set! type "db_query"))
((generic_name (identifier) @d) @node
  (#eq? @d "DbSet")
  (#set! type "db_query") (#set! name "DbSet"))
((invocation_expression function: (member_access_expression name: (identifier) @name)
   arguments: (argument_list (argument (lambda_expression)))) @node
  (#any-of? @name "Select" "Where" "Aggregate" "OrderBy" "OrderByDescending" "Any" "All" "First" "FirstOrDefault"
     "GroupBy" "SelectMany" "Count")
  (#set! type "higher_order_function"))
((invocation_expression function: [(identifier) @callee (member_access_expression name: [(identifier) @callee (generic_name (identifier) @callee)])]
   arguments: (argument_list (argument (lambda_expression) @node)))
  (#set! type "closure") (#set! name "{callee}"))
([(string_literal) (verbatim_string_literal) (raw_string_literal)] @node
  (#set! type "db_query") (#set! check "sql"))
