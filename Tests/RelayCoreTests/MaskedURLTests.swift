import RelayCore
import Testing

@Suite("URLs as shown: passwords masked")
struct MaskedURLTests {
    @Test(arguments: [
        ("https://ada:s3cret@rhea.example/api", "https://ada:***@rhea.example/api"),
        ("http://token@127.0.0.1:8000", "http://***@127.0.0.1:8000"),
        ("postgres://u:p%40ss@db:5432/x?sslmode=require", "postgres://u:***@db:5432/x?sslmode=require"),
        ("https://a:b@c@host/path@more", "https://a:***@host/path@more"),
        ("https://rhea.example/v1?x=a@b", "https://rhea.example/v1?x=a@b"),
        ("http://127.0.0.1:18082/v1", "http://127.0.0.1:18082/v1"),
        ("not a url", "not a url"),
    ])
    func aURLsPasswordNeverShows(url: String, shown: String) {
        #expect(MaskedURL.display(url) == shown)
    }
}
