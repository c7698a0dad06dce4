# Verification only: Ruby 3.1 lacks Data (3.2); a keyword Struct stands in for it.
unless defined?(Data) && Data.respond_to?(:define)
  class Data
    def self.define(*fields, &blk)
      s = Struct.new(*fields, keyword_init: true, &blk)
      s.class_eval { def with(**kw) = self.class.new(**to_h.merge(kw)) }
      s
    end
  end
end
