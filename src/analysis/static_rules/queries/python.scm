; Python: decorators (FastAPI/Flask routes, functools, @contextmanager, @dataclass, pytest's
; parametrize), classes (dataclasses and pydantic models, enums, protocols), `with` blocks and
; `__enter__`, async/await and asyncio, generators, lambdas, try/except, ORM and DB-API calls,
; threads, locks and queues, Django URLs, type aliases and generics, tests and raw SQL.
; Conventions: see src/analysis/static_rules/mod.rs.

; ---- decorators
((decorator [(identifier) @name (attribute) @name (call function: [(identifier) (attribute)] @name)]) @node
  (#set! type "decorator"))
((decorator [(identifier) @name (attribute) @name]) @node
  (#match? @name "(^|\\.)contextmanager$")
  (#set! type "context_manager"))
((decorator [(identifier) @name (attribute) @name (call function: [(identifier) (attribute)] @name)]) @node
  (#match? @name "^(functools\\.|(lru_cache|cache|wraps)$)")
  (#set! type "higher_order_function"))
((decorator (call function: (attribute object: (_) attribute: (identifier) @m)
   arguments: (argument_list . (string (string_content) @route)))) @node
  (#any-of? @m "get" "post" "put" "patch" "delete" "head")
  (#set! type "api_route") (#set! name "{m|upper} {route}"))
((decorator (call function: (attribute object: (_) attribute: (identifier) @m)
   arguments: (argument_list . (string (string_content) @name)) @args)) @node
  (#any-of? @m "route" "api_route")
  (#set! type "api_route") (#set! check "flask_route"))
((decorator (call function: (attribute object: (_) attribute: (identifier) @m)
   arguments: (argument_list . (string (string_content) @route)))) @node
  (#eq? @m "websocket")
  (#set! type "api_route") (#set! name "WS {route}"))
; A table test has a table: `@pytest.mark.parametrize("a,b", [(1, 2), …])`.
((decorated_definition
   (decorator (call function: (attribute) @d arguments: (argument_list (string) [(list (_)) (tuple (_))])))
   definition: (function_definition name: (identifier) @name)) @node
  (#match? @d "(^|\\.)mark\\.parametrize$")
  (#set! type "table_test"))

; ---- classes
((class_definition name: (identifier) @name) @node
  (#set! type "class"))
((class_definition name: (identifier) @name) @node
  (#match? @name ".(Service|Repository|Controller|Handler|Factory)$")
  (#set! type "layered_class"))
((class_definition name: (identifier) @name) @node
  (#match? @name "^Test")
  (#set! type "test"))
((decorated_definition
   (decorator [(identifier) @d (attribute) @d (call function: [(identifier) (attribute)] @d)])
   definition: (class_definition name: (identifier) @name)) @node
  (#match? @d "(^|\\.)dataclass$")
  (#set! type "dataclass"))
((class_definition name: (identifier) @name superclasses: (argument_list [(identifier) (attribute)] @b)) @node
  (#match? @b "(^|\\.)(BaseModel|NamedTuple|TypedDict)$")
  (#set! type "dataclass"))
((class_definition name: (identifier) @name superclasses: (argument_list [(identifier) (attribute)] @b)) @node
  (#match? @b "(^|\\.)(Enum|IntEnum|StrEnum|Flag)$")
  (#set! type "enum"))
((class_definition name: (identifier) @name superclasses: (argument_list [(identifier) (attribute)] @b)) @node
  (#match? @b "(^|\\.)(Protocol|ABC)$")
  (#set! type "interface"))
((class_definition name: (identifier) @name
   body: (block (expression_statement (assignment left: (identifier) @f)))) @node
  (#eq? @f "_instance")
  (#set! type "singleton"))
((class_definition name: (identifier) @name
   body: (block [(function_definition name: (identifier) @m)
                 (decorated_definition definition: (function_definition name: (identifier) @m))])) @node
  (#any-of? @m "__enter__" "__exit__" "__aenter__" "__aexit__")
  (#set! type "context_manager"))

; ---- functions
((function_definition "async" name: (identifier) @name) @node
  (#set! type "async_function"))
((function_definition name: (identifier) @name) @node
  (#match? @name "^test(_|$)")
  (#set! type "test"))
((yield) @node
  (#set! type "generator") (#set! name "yield") (#set! check "enclosing_fn"))
((lambda) @node
  (#set! type "closure") (#set! name "lambda"))
((type_alias_statement left: (type) @name) @node
  (#set! type "type_alias"))
((assignment left: (identifier) @name type: (type) @t) @node
  (#match? @t "TypeAlias$")
  (#set! type "type_alias"))
((assignment left: (identifier) @p right: (call function: (identifier) @f arguments: (argument_list (keyword_argument name: (identifier) @k)))) @node
  (#eq? @f "TypeVar") (#eq? @k "bound")
  (#set! type "generic") (#set! name "bounded TypeVar {p}"))
((assignment left: (identifier) @p right: (call function: (identifier) @f arguments: (argument_list . (string) .))) @node
  (#eq? @f "TypeVar")
  (#set! type "generic") (#set! name "unbounded TypeVar {p}"))
; PEP 695: `def first[T](…)`, `class Box[T: Hashable]`.
([(function_definition type_parameters: (type_parameter (type (identifier) @p)))
  (class_definition type_parameters: (type_parameter (type (identifier) @p)))] @node
  (#set! type "generic") (#set! name "unbounded {p}"))
([(function_definition type_parameters: (type_parameter (type (constrained_type . (type) @p . (type) @b))))
  (class_definition type_parameters: (type_parameter (type (constrained_type . (type) @p . (type) @b))))] @node
  (#set! type "generic") (#set! name "bounded {p}: {b}"))

; ---- with, errors, await
((with_statement (with_clause (with_item value: [(call function: (_) @t) (as_pattern (call function: (_) @t))
                                                 (identifier) @t (attribute) @t (as_pattern [(identifier) (attribute)] @t)]))) @node
  (#set! type "context_manager") (#set! name "{t}"))
((try_statement) @node
  (#set! type "error_handling") (#set! name "try/except"))
((except_clause !value) @node
  (#set! type "error_handling") (#set! name "except"))
((except_clause . [(identifier) (attribute)] @e) @node
  (#set! type "error_handling") (#set! name "except {e}"))
((except_clause . (as_pattern [(identifier) (attribute)] @e)) @node
  (#set! type "error_handling") (#set! name "except {e}"))
((except_clause . (as_pattern (tuple . [(identifier) (attribute)] @e))) @node
  (#set! type "error_handling") (#set! name "except {e}"))
((except_clause . (tuple . [(identifier) (attribute)] @e)) @node
  (#set! type "error_handling") (#set! name "except {e}"))
((await (call function: [(identifier) (attribute)] @t)) @node
  (#set! type "await") (#set! name "{t|path}"))
((await [(identifier) (attribute)] @t) @node
  (#set! type "await") (#set! name "{t}"))

; ---- calls: asyncio, threads, locks, queues, functional helpers
((call function: (attribute) @name) @node
  (#any-of? @name "asyncio.gather" "asyncio.wait" "asyncio.as_completed" "asyncio.TaskGroup")
  (#set! type "promise_combinator"))
((call function: (attribute) @name) @node
  (#any-of? @name "asyncio.create_task" "threading.Thread" "multiprocessing.Process" "asyncio.to_thread"
     "loop.create_task" "tg.create_task" "loop.run_in_executor")
  (#set! type "spawned_task"))
((call function: (identifier) @name) @node
  (#eq? @name "Thread")
  (#set! type "spawned_task"))
((call function: (attribute object: (_) @e attribute: (identifier) @s) @name) @node
  (#match? @e "executor$") (#eq? @s "submit")
  (#set! type "spawned_task"))
((call function: [(identifier) (attribute)] @name) @node
  (#any-of? @name "threading.Lock" "threading.RLock" "asyncio.Lock" "asyncio.Semaphore" "threading.Semaphore" "Lock" "RLock")
  (#set! type "mutex"))
((call function: [(identifier) (attribute)] @name) @node
  (#any-of? @name "asyncio.Queue" "queue.Queue" "multiprocessing.Queue" "Queue")
  (#set! type "channel"))
((call function: [(identifier) (attribute)] @name) @node
  (#any-of? @name "map" "filter" "reduce" "functools.reduce" "functools.partial")
  (#set! type "higher_order_function"))
((call function: (identifier) @name arguments: (argument_list (keyword_argument name: (identifier) @k))) @node
  (#any-of? @name "sorted" "min" "max") (#eq? @k "key")
  (#set! type "higher_order_function"))

; ---- database
((call function: (attribute object: (_) @recv attribute: (identifier) @m)) @node
  (#match? @recv "(^|\\.)([a-z_]*session[a-z_]*|db|conn|cursor|connection)$")
  (#any-of? @m "query" "execute" "scalars" "scalar" "get" "add" "commit" "fetch" "fetchrow" "fetchall" "executemany")
  (#set! type "db_query") (#set! name "{recv}.{m}"))
((call function: (attribute object: (_) @recv attribute: (identifier) @m)) @node
  (#eq? @m "filter_by")
  (#set! type "db_query") (#set! name "{recv|path}.{m}"))
((call function: (attribute object: (attribute attribute: (identifier) @o) @recv attribute: (identifier) @m)) @node
  (#eq? @o "objects")
  (#any-of? @m "filter" "get" "all" "create" "exclude" "update" "delete" "get_or_create" "values" "annotate")
  (#set! type "db_query") (#set! name "{recv}.{m}"))
((call function: (identifier) @name arguments: (argument_list . (identifier) @model)) @node
  (#eq? @name "select") (#match? @model "^[A-Z]")
  (#set! type "db_query"))
((string) @node
  (#set! type "db_query") (#set! check "sql"))
((call function: (identifier) @f arguments: (argument_list . (string (string_content) @route))) @node
  (#any-of? @f "path" "re_path")
  (#set! type "api_route") (#set! name "ROUTE {route}") (#set! check "django_urls"))
