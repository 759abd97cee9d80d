import Foundation
import Testing

/// Rules for code that only a release build breaks, which no debug test can catch: the tests
/// run a debug build, and production runs a release one (docs/contributing.md).
@Suite("What only a release build breaks")
struct ReleaseBuildRulesTests {
    /// A task-local whose value is a closure (`@TaskLocal static var check: @Sendable () -> Bool`)
    /// crashes every `withValue` of a Swift 6.3 release build in `swift_task_localValuePush`
    /// (no type metadata for the function type), while the debug build runs it fine: it took down
    /// every delivery of a release `serve`. A class around the closure is plain
    /// (`DeliveryPermit.Check`, `Untrusted.Observer`).
    @Test func noTaskLocalHoldsAClosure() throws {
        let sources = DocsTests.root.appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        var offenders: [String] = []
        for case let file as URL in files where file.pathExtension == "swift" {
            let text = try String(contentsOf: file, encoding: .utf8)
            for line in text.split(separator: "\n") where line.contains("@TaskLocal") {
                // The declared type: after the name's colon, up to an `=` or the line's end.
                guard let name = line.range(of: "var "), let colon = line.range(of: ":", range: name.upperBound..<line.endIndex) else {
                    // The attribute on a line of its own: the declaration is on the next one.
                    offenders += line.hasSuffix("@TaskLocal") ? ["\(file.lastPathComponent): a @TaskLocal this test cannot read"] : []
                    continue
                }
                let type = line[colon.upperBound...].prefix { $0 != "=" }.trimmingCharacters(in: .whitespaces)
                if type.contains("->") { offenders.append("\(file.lastPathComponent): \(line.trimmingCharacters(in: .whitespaces))") }
            }
        }
        #expect(offenders.isEmpty, "task-locals holding a closure: \(offenders)")
    }
}
