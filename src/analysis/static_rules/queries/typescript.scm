; TypeScript and TSX only (the shared patterns are in ecmascript.scm): interfaces, type
; aliases, enums, generic parameters with and without a constraint, conditional types (with or
; without `infer`), mapped types, class fields as the grammar names them here.
((interface_declaration name: (type_identifier) @name) @node
  (#set! type "interface"))
((type_alias_declaration name: (type_identifier) @name) @node
  (#set! type "type_alias"))
((enum_declaration name: (identifier) @name) @node
  (#set! type "enum"))
((abstract_class_declaration name: (type_identifier) @name) @node
  (#set! type "class"))
((type_parameter name: (type_identifier) @p constraint: (constraint) @c) @node
  (#set! type "generic") (#set! name "bounded {p} {c}"))
((type_parameter name: (type_identifier) @p !constraint) @node
  (#set! type "generic") (#set! name "unbounded {p}"))
((conditional_type) @node
  (#set! type "type_level") (#set! check "ts_conditional"))
((mapped_type_clause) @node
  (#set! type "type_level") (#set! name "mapped type"))
((class_declaration name: (_) @name body: (class_body (public_field_definition "static" name: (property_identifier) @f))) @node
  (#match? @f "^_?instance$")
  (#set! type "singleton"))
