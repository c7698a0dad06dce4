//! Ruby: the old rules' table (ported).

use super::{check, found};

#[test]
fn every_pattern_positive_and_negative() {
    let positives: &[(&str, &str, &str)] = &[
        ("class User < ApplicationRecord\nend", "class", "User"),
        ("class UsersController < ApplicationController\nend", "layered_class", "UsersController"),
        ("Point = Struct.new(:x, :y)", "struct", "Point"),
        ("Coord = Data.define(:lat, :lng)", "dataclass", "Coord"),
        ("enum status: { draft: 0, published: 1 }", "enum", "status"),
        ("get '/about', to: 'pages#about'", "api_route", "GET /about"),
        ("post \"/login\" do\nend", "api_route", "POST /login"),
        ("resources :users", "api_route", "resources users"),
        ("root 'home#index'", "api_route", "GET /"),
        ("@users = User.where(active: true)", "db_query", "User.where"),
        ("user = User.find_by!(email: e)", "db_query", "User.find_by!"),
        ("current_user.posts.includes(:tags)", "db_query", "includes"),
        ("scope :active, -> { where(deactivated_at: nil) }", "db_query", "where"),
        ("rows = conn.exec(\"SELECT * FROM users WHERE id = 1\")", "db_query", "SELECT users"),
        ("xs.each_with_object([]) { |x, acc| acc << x }", "higher_order_function", "each_with_object"),
        ("begin\n  x\nrescue ActiveRecord::RecordNotFound => e\nend", "error_handling", "begin/rescue"),
        (
            "begin\n  x\nrescue ActiveRecord::RecordNotFound => e\nend",
            "error_handling",
            "rescue ActiveRecord::RecordNotFound",
        ),
        ("rescue_from ActiveRecord::RecordNotFound, with: :not_found", "error_handling", "rescue_from"),
        ("users.each do |u|\n  puts u\nend", "closure", "each"),
        ("names = users.map { |u| u.name }", "closure", "map"),
        ("square = ->(x) { x * x }", "closure", "lambda"),
        ("names = users.map(&:name)", "higher_order_function", "map"),
        ("RSpec.describe User, type: :model do\nend", "test", "User"),
        ("it 'validates email' do\nend", "test", "validates email"),
        ("def test_creates_user\nend", "test", "test_creates_user"),
        ("class Config\n  include Singleton\nend", "singleton", "Config"),
        ("lock = Mutex.new", "mutex", "Mutex"),
        ("t = Thread.new { work }", "spawned_task", "Thread.new"),
        ("q = Queue.new", "channel", "Queue"),
        ("e = Enumerator.new do |y|\nend", "generator", "Enumerator"),
    ];
    let negatives: &[(&str, &str)] = &[
        ("klass = 1", "class"),
        ("class User\nend", "layered_class"),
        ("Point = Hash.new", "struct"),
        ("Point = Hash.new", "dataclass"),
        ("enumerable = 1", "enum"),
        ("params.get(1)\ngetter 'x'", "api_route"),
        ("hash.find { |k| k }", "db_query"),
        ("where_clause = 1", "db_query"),
        ("rescued = 1", "error_handling"),
        ("items.each do\nend", "closure"),
        ("names.select(:id)", "higher_order_function"),
        ("describe_thing\nit", "test"),
        ("instance = 1", "singleton"),
        ("mutex = 1", "mutex"),
        ("thread = 1", "spawned_task"),
        ("queue = []", "channel"),
        ("yielder = 1", "generator"),
    ];
    check("app/models/user.rb", "#", positives, negatives);
}

#[test]
fn request_specs_do_not_declare_routes() {
    let f = found("spec/requests/users_spec.rb", "it 'lists' do\n  get '/users'\nend\n");
    assert!(f.iter().all(|(t, _)| t != "api_route"), "{f:?}");
}

#[test]
fn heredocs_strings_and_comments_are_not_code() {
    let src = "sql = <<~SQL\n  User.where(x) rescue\nSQL\ns = \"Thread.new #{1}\"\n=begin\nresources :x\n=end\n";
    let f = found("a.rb", src);
    assert!(
        f.iter().all(|(t, _)| t != "db_query" && t != "spawned_task" && t != "api_route" && t != "error_handling"),
        "{f:?}"
    );
}
