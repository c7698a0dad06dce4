; JavaScript only (the shared patterns are in ecmascript.scm): class fields as the grammar
; names them here.
((class_declaration name: (_) @name body: (class_body (field_definition "static" property: (property_identifier) @f))) @node
  (#match? @f "^_?instance$")
  (#set! type "singleton"))
