import RelayCore

/// The inbox's waiting items as the scheduler sees them: ids per team, and the teams taken in
/// turn — so one team's flood cannot starve another team, whose next command is taken after at
/// most one of each other team's.
struct TeamQueues {
    private var queues: [String: FIFO<Int64>] = [:]
    /// Teams with waiting items, in the order they are served.
    private var turns = FIFO<String>()
    private var ids: Set<Int64> = []

    var count: Int { ids.count }

    func contains(_ id: Int64) -> Bool { ids.contains(id) }

    /// Adds an item at the end of its team's queue; nothing when it is already waiting.
    mutating func append(_ id: Int64, team: String) {
        guard ids.insert(id).inserted else { return }
        if queues[team, default: FIFO()].isEmpty { turns.push(team) }
        queues[team, default: FIFO()].push(id)
    }

    /// The next item: the head of the team whose turn it is; that team goes to the back.
    mutating func next() -> InboxTicket? {
        while let team = turns.pop() {
            guard let id = queues[team]?.pop() else { continue }
            if queues[team]?.isEmpty == false {
                turns.push(team)
            } else {
                queues[team] = nil
            }
            ids.remove(id)
            return InboxTicket(id: id, team: team)
        }
        return nil
    }
}

/// A first-in-first-out queue on an array: pops move a head index, and the consumed front is
/// dropped once it is more than half of the storage.
struct FIFO<Element> {
    private var items: [Element] = []
    private var head = 0

    var isEmpty: Bool { head == items.count }
    var count: Int { items.count - head }

    mutating func push(_ item: Element) { items.append(item) }

    mutating func pop() -> Element? {
        guard head < items.count else { return nil }
        let item = items[head]
        head += 1
        if head == items.count {
            items.removeAll(keepingCapacity: true)
            head = 0
        } else if head > 64 && head * 2 > items.count {
            items.removeFirst(head)
            head = 0
        }
        return item
    }
}
