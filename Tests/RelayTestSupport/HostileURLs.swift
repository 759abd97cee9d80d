/// Pieces of web addresses that chat platforms' link parsers read differently (issue 47, point 1):
/// schemes, hosts with `_` or digits only, ports, userinfo, paths, queries and fragments holding
/// `@channel` and its kin, and the mentions themselves. Each platform's output-safety property
/// test draws from its own alphabet plus these, so its generated text holds web addresses of
/// every odd shape with mentions before, inside and after them, and the platform's reader — a
/// model of what that platform links and what it pings — must find no live mention in what the
/// renderer wrote. (Mattermost's autolinker, for one, takes no host with `_`: `https://a_b/@channel`
/// is text there, and its `@channel` pings.)
public enum HostileURLs {
    /// The pieces, and 60 whole addresses made of them (so a drawn text holds whole odd addresses
    /// often, not only when the pieces happen to line up).
    public static let pieces: [String] = parts + whole

    static let hosts = [
        "a_b", "x_y.example.com", "example.com", "ex-ample.org", "localhost", "127.0.0.1", "[::1]", "2130706433", "bücher.example",
        "xn--bcher-kva.example", "a..b", "sub.a_b.example",
    ]
    static let paths = ["/@channel", "/@here", "/@all", "/@everyone", "/@room", "/a_b/@alice", "?q=@all", "#@here", "/%40channel", "/", "", "/x@y"]

    /// Every host and every path, each with a scheme (or none, after `www.`), with and without
    /// userinfo and a port, in 60 combinations that vary them independently.
    static let whole: [String] = (0..<60).map { index in
        let scheme = ["https://", "http://", "HTTPS://", "www.", "ftp://"][index % 5]
        let userinfo = ["", "user@", "", "user:pw@"][(index / 5) % 4]
        let port = ["", ":8080", "", ":"][(index / 3) % 4]
        return scheme + userinfo + hosts[index % hosts.count] + port + paths[(index * 7) % paths.count]
    }

    static let parts: [String] = [
        // Schemes, and what some parsers link without one.
        "https://", "http://", "HTTPS://", "ftp://", "mailto:", "www.",
        // Hosts: underscores, digits only, dotted or not, IP forms, IDN.
        "a_b", "x_y.example.com", "example.com", "ex-ample.org", "localhost", "127.0.0.1", "[::1]", "2130706433", "0x7f000001",
        "bücher.example", "xn--bcher-kva.example", "a..b",
        // Ports and userinfo.
        ":8080", ":", ":0", "user@", "user:pw@", "@",
        // Paths, queries, fragments, and the punctuation that ends or does not end a link.
        "/", "/@channel", "/@here", "/@all", "/@everyone", "/@room", "/~town-square", "?q=@all", "#@here", "/a_b_c", "/%40channel", ".", ",",
        ")", "(", "]", "\"", "'",
        // The mentions.
        "@channel", "@here", "@all", "@everyone", "@room", "@alice",
    ]
}
