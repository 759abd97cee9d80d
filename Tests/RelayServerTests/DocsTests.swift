import DiscordAdapter
import Foundation
import MatrixAdapter
import MattermostAdapter
import RelayPlatform
import RelayServer
import SlackAdapter
import TelegramAdapter
import Testing

/// README.md and docs/ stay true to the tree and to the configuration: every relative link
/// resolves (to a file, and to a heading of it when it names one), every variable with one of the
/// relay's prefixes that the docs name is one the configuration reads, and every variable the
/// configuration reads is named in the docs.
@Suite("Docs: links and variables")
struct DocsTests {
    /// The package's root: this file is Tests/RelayServerTests/DocsTests.swift.
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static let platforms: [any ChatPlatform.Type] = [
        SlackPlatform.self, DiscordPlatform.self, TelegramPlatform.self, MatrixPlatform.self, MattermostPlatform.self,
    ]

    /// Names with the relay's prefixes that the docs write on purpose although nothing reads them,
    /// each with the reason.
    static let namedOnPurpose: [String: String] = [
        "COUNCIL_A_API_KEY": "the example of a misspelt variable that `doctor` and `serve` name (\"Did you mean COUNCIL_A_API_KEY_ENV?\")",
        "COUNCIL_MODLES": "the example of a misspelt variable that `doctor` and `serve` name",
        "HTTP_PROXY": "read by other software, so not taken for a misspelt relay variable (UnreadVariables.readByOthers)",
    ]

    /// The model the council's load is given, so that its per-model variables are read.
    static let councilModel = "DOCSMODEL"

    /// README.md and every Markdown file under docs/, as paths relative to the root.
    static func markdownFiles() throws -> [String] {
        var files = ["README.md"]
        let docs = root.appendingPathComponent("docs")
        guard let walker = FileManager.default.enumerator(atPath: docs.path) else { return files }
        while let path = walker.nextObject() as? String {
            if path.hasSuffix(".md") { files.append("docs/" + path) }
        }
        return files.sorted()
    }

    static func read(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    /// The lines outside fenced code blocks (links there are not links), with their numbers.
    static func prose(_ text: String) -> [(number: Int, line: String)] {
        var lines: [(number: Int, line: String)] = []
        var fenced = false
        for (index, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.trimmingCharacters(in: .whitespaces).hasPrefix("```") {
                fenced.toggle()
                continue
            }
            if !fenced { lines.append((index + 1, String(line))) }
        }
        return lines
    }

    static func matches(_ pattern: String, in text: String, group: Int = 0) -> [String] {
        guard let regex = try? NSRegularExpression(pattern: pattern) else { return [] }
        let range = NSRange(text.startIndex..., in: text)
        return regex.matches(in: text, range: range).compactMap { match in
            Range(match.range(at: group), in: text).map { String(text[$0]) }
        }
    }

    /// The anchors GitHub makes for a file's headings: lower case, punctuation dropped, spaces as
    /// hyphens, a repeated one numbered.
    static func anchors(in text: String) -> Set<String> {
        var seen: [String: Int] = [:]
        var anchors = Set<String>()
        for (_, line) in prose(text) where line.hasPrefix("#") {
            let heading = line.drop { $0 == "#" }
            guard heading.first == " " else { continue }
            var title = heading.trimmingCharacters(in: .whitespaces)
            for (link, text) in zip(matches(#"\[[^\]]*\]\([^)]*\)"#, in: title), matches(#"\[([^\]]*)\]\([^)]*\)"#, in: title, group: 1)) {
                title = title.replacingOccurrences(of: link, with: text)
            }
            let slug = String(
                title.lowercased().unicodeScalars.compactMap { scalar -> Character? in
                    if scalar == " " { return "-" }
                    if scalar == "-" || scalar == "_" || CharacterSet.alphanumerics.contains(scalar) { return Character(scalar) }
                    return nil
                })
            let count = seen[slug, default: 0]
            seen[slug] = count + 1
            anchors.insert(count == 0 ? slug : "\(slug)-\(count)")
        }
        return anchors
    }

    @Test func everyRelativeLinkResolves() throws {
        var broken: [String] = []
        var checked = 0
        for file in try Self.markdownFiles() {
            let text = try Self.read(file)
            let folder = (file as NSString).deletingLastPathComponent
            for (number, line) in Self.prose(text) {
                // Inline code is not a link either.
                let outsideCode = line.split(separator: "`", omittingEmptySubsequences: false).enumerated().filter { $0.offset % 2 == 0 }
                    .map(\.element).joined(separator: " ")
                for target in Self.matches(#"\]\(([^)\s]+)(?:\s+"[^"]*")?\)"#, in: outsideCode, group: 1) {
                    if target.contains("://") || target.hasPrefix("mailto:") { continue }
                    checked += 1
                    let parts = target.split(separator: "#", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
                    let path = parts[0].isEmpty ? file : (folder as NSString).appendingPathComponent(parts[0])
                    let resolved = Self.root.appendingPathComponent(path).standardizedFileURL.path
                    guard FileManager.default.fileExists(atPath: resolved) else {
                        broken.append("\(file):\(number): [\(target)] — no file \(path)")
                        continue
                    }
                    if parts.count == 2, path.hasSuffix(".md") {
                        let anchors = Self.anchors(in: try String(contentsOfFile: resolved, encoding: .utf8))
                        if !anchors.contains(parts[1]) {
                            broken.append("\(file):\(number): [\(target)] — \(path) has no heading #\(parts[1])")
                        }
                    }
                }
            }
        }
        #expect(checked > 20, "only \(checked) relative links found: is the root \(Self.root.path) right?")
        #expect(broken.isEmpty, "links that do not resolve:\n\(broken.joined(separator: "\n"))")
    }

    /// Every variable the configuration reads: once with nothing set (every section reads its
    /// keys, secrets their files), once with the council as the backend and one model (its
    /// per-model keys), a model's API key named and voice notes on.
    static func variablesRead() async throws -> Set<String> {
        let log = ConfigReadLog()
        _ = try await ConfigurationLoader.load(file: nil, environment: [:], platforms: platforms, readLog: log)
        let model = councilModel
        _ = try await ConfigurationLoader.load(
            file: nil,
            environment: [
                "TRIBUNAL_BACKEND": "council", "COUNCIL_MODELS": model.lowercased(), "COUNCIL_\(model)_BASE_URL": "http://127.0.0.1:9/v1",
                "COUNCIL_\(model)_MODEL": "m", "COUNCIL_\(model)_TIER": "cheap", "COUNCIL_\(model)_API_KEY_ENV": "DOCS_TEST_KEY", "DOCS_TEST_KEY": "k",
                "COUNCIL_CHAIRMAN": model.lowercased(),
                // Voice notes on: the transcription section reads its limits only then.
                "TRANSCRIPTION_BASE_URL": "http://127.0.0.1:9/v1", "TRANSCRIPTION_MODEL": "m",
            ], platforms: platforms, readLog: log)
        return log.read
    }

    /// The words in the docs that look like variables (upper case with underscores), with a
    /// council model's placeholder (`COUNCIL_<NAME>_BASE_URL`) read as a model named NAME.
    static func documentedNames() throws -> [String: [String]] {
        var names: [String: [String]] = [:]
        for file in try markdownFiles() {
            let text = try read(file).replacingOccurrences(of: "_<NAME>_", with: "_NAME_")
            for name in matches(#"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+\b"#, in: text) {
                names[name, default: []].append(file)
            }
        }
        return names
    }

    /// `COUNCIL_<model>_<FIELD>` for the fields read for the test's model: the fields.
    static func councilFields(_ read: Set<String>) -> Set<String> {
        let prefix = "COUNCIL_\(councilModel)_"
        return Set(read.filter { $0.hasPrefix(prefix) }.map { String($0.dropFirst(prefix.count)) })
    }

    /// Whether `name` is one a council model's fields spell for some model.
    static func isCouncilModelVariable(_ name: String, fields: Set<String>) -> Bool {
        guard name.hasPrefix("COUNCIL_") else { return false }
        let rest = name.dropFirst("COUNCIL_".count)
        return fields.contains { field in rest.hasSuffix("_" + field) && rest.count > field.count + 1 }
    }

    @Test func everyDocumentedVariableIsOneTheConfigurationReads() async throws {
        let read = try await Self.variablesRead()
        let fields = Self.councilFields(read)
        #expect(fields.contains("BASE_URL"), "the council's load read no per-model keys: \(read.sorted())")
        var unknown: [String] = []
        for (name, files) in try Self.documentedNames().sorted(by: { $0.key < $1.key }) {
            guard UnreadVariables.prefixes.contains(where: name.hasPrefix) else { continue }
            if read.contains(name) || Self.namedOnPurpose[name] != nil || Self.isCouncilModelVariable(name, fields: fields) { continue }
            unknown.append("\(name) (in \(Set(files).sorted().joined(separator: ", ")))")
        }
        #expect(unknown.isEmpty, "variables the docs name that the configuration does not read:\n\(unknown.joined(separator: "\n"))")
    }

    /// A misspelling is warned about only under a prefix `UnreadVariables` knows, so every
    /// variable read must have one (`RELAY_K` misspelt `RELAY_KK` is named at start too).
    @Test func everyVariableTheConfigurationReadsHasAPrefixTheWarningKnows() async throws {
        let unwatched = try await Self.variablesRead().filter { name in !UnreadVariables.prefixes.contains(where: name.hasPrefix) }
        #expect(unwatched.isEmpty, "read, but a misspelling of them would not be warned about: \(unwatched.sorted())")
    }

    @Test func everyVariableTheConfigurationReadsIsDocumented() async throws {
        let read = try await Self.variablesRead()
        let documented = Set(try Self.documentedNames().keys)
        var missing: [String] = []
        for name in read.sorted() {
            if name.hasPrefix("COUNCIL_\(Self.councilModel)_") {
                let field = String(name.dropFirst("COUNCIL_\(Self.councilModel)_".count))
                let spelt = documented.contains { $0 != name && Self.isCouncilModelVariable($0, fields: [field]) }
                if !spelt { missing.append("\(name) (as COUNCIL_<NAME>_\(field), for some model)") }
            } else if !documented.contains(name) {
                missing.append(name)
            }
        }
        #expect(missing.isEmpty, "variables the configuration reads that no doc names:\n\(missing.joined(separator: "\n"))")
    }
}
