export function threadCount(): number
export function childProcesses(): number[]
export function zombieChildren(): number[]
