# Type stubs of the C++ extension hetplan._core (python/src/module.cc). Internal:
# the package's Python code checks arguments and wraps these objects.
from typing import Any, Callable, Dict, List, Optional, Tuple

source_dir: str
default_cache_dir: str
schedule_format_version: int
nondeterministic_fields: List[str]

def onnxruntime_version() -> str: ...
def cpu_model_name() -> str: ...
def parse_shape(text: str) -> Tuple[str, List[int]]: ...

class Model:
    path: str
    from_file: bool
    sha256: str
    fusion: str
    onnx_nodes: int
    folded_nodes: int
    num_operators: int
    num_edges: int
    def graph_json(self) -> Dict[str, Any]: ...
    def summary(self) -> str: ...
    def dot(self) -> str: ...

def load_model(path: str, fusion: str, shapes: Dict[str, List[int]], max_operators: int,
               max_model_mib: float) -> Model: ...
def load_model_bytes(data: bytes, label: str, fusion: str, shapes: Dict[str, List[int]], max_operators: int,
                     max_model_mib: float) -> Model: ...

class Platform:
    name: str
    description: str
    source: str
    overrides: List[str]
    pus: List[str]
    def with_overrides(self, overrides: List[str]) -> Platform: ...
    def to_dict(self) -> Dict[str, Any]: ...
    def layers(self, model: Model) -> Dict[str, Any]: ...

def load_platform(name_or_path: str) -> Platform: ...
def parse_platform(text: str, label: str) -> Platform: ...

class CostTable:
    meta: Dict[str, str]
    num_ops: int
    def to_dict(self) -> Dict[str, Any]: ...
    def to_csv(self) -> str: ...
    def save(self, csv: str, json: str) -> None: ...

def load_cost_table(path: str) -> CostTable: ...
def profile(model: Model, platform: Platform, pu: str, threads: Optional[int], warmup: int, runs: int,
            model_runs: Optional[int], in_context: bool, cache_dir: str,
            progress: Optional[Callable[[str, int, int], Any]]) -> CostTable: ...

def list_solvers() -> List[Dict[str, Any]]: ...
def resolve_solver(name: str) -> Tuple[str, Optional[str]]: ...
def method_info(name: str) -> Dict[str, Any]: ...

class PlanSpec:
    solver: str
    objective: str

def solver_spec(solver: str, objective: str, latency_cap: Optional[float], method_references: bool,
                time_limit: Optional[float], gap: Optional[float], threads: Optional[int],
                search_nodes: Optional[int], warm_start: Optional[bool], log: Optional[bool], write_lp: str,
                write_mps: str, mip_backend: Optional[str], accounting: Optional[str], algorithm: Optional[str], space: Optional[str],
                solo_steps: Optional[bool], axonn_max_switches: Optional[int], hetero_max_pus: Optional[int],
                coexec: Optional[CostTable]) -> Tuple[PlanSpec, Optional[str]]: ...
def map_spec(mode: str, objective: str, accounting: Optional[str], algorithm: str, second_model: bool, joint: bool,
             lockstep: bool, coexec: Optional[CostTable]) -> PlanSpec: ...

class PlanCall: ...

def make_call(spec: PlanSpec, model: Model, platform: Platform, table: Optional[CostTable], table_label: str,
              costs_path: str, second: Optional[Model], second_table: Optional[CostTable], second_label: str,
              second_path: str, warmup: int, runs: int, cache_dir: str, boundary_cost: str) -> PlanCall: ...
def run_plan(call: PlanCall, progress: Optional[Callable[[str, int, int], Any]]) -> PlanResult: ...
def _time_run_plan(call: PlanCall, repeats: int) -> List[float]: ...
def plan_generation(model: str, platform: str, overrides: List[str], llm: str, spec: PlanSpec, warmup: int, runs: int,
                    cache_dir: str, prefill_file: str, decode_file: str) -> Dict[str, Any]: ...

class PlanFileDevice:
    name: str
    kind: str
    costs: str
    execution: str
    capacity_crossbars: Optional[int]
    shared_adcs: Optional[int]
    power_w: Optional[float]
    boundary_us: float
    threads: int
    configured: bool
    provider: str
    provider_options: Dict[str, str]
    cores: List[int]
    def spatial(self) -> bool: ...
    def executable(self) -> bool: ...

class PlanFileWrite:
    start_us: float
    finish_us: float
    write_us: float
    energy_uj: float
    rows: int
    rows_written: int

class PlanFileWeight:
    rows: int
    cols: int
    bits: int
    groups: int
    directions: int
    n_mvm: int
    product: str

class PlanFileOperator:
    name: str
    type: str
    device: str
    nodes: List[str]
    device_index: int
    start_us: float
    finish_us: float
    slowdown: float
    crossbars: Optional[int]
    request: int
    predicted_us: float
    cost_us: Dict[str, Optional[float]]
    op_energy_uj: Dict[str, float]
    adcs: Dict[str, int]
    crossbar_ids: List[Tuple[int, int]]
    write: Optional["PlanFileWrite"]
    output_bytes: int
    weight: Optional["PlanFileWeight"]

class PlanFileEdge:
    from_: int
    to: int
    bytes: int
    transfer_us: Optional[float]
    elements: int

class PlanFileRequest:
    file: str
    sha256: str
    operators: Optional[int]
    id_offset: Optional[int]

class PlanFile:
    version: int
    model_name: str
    model_file: str
    model_sha256: str
    fusion: str
    platform: str
    overrides: List[str]
    devices: List[PlanFileDevice]
    operators: List[PlanFileOperator]
    edges: List[PlanFileEdge]
    makespan_us: float
    energy_uj: Optional[float]
    solver: str
    solver_status: str
    baselines: Dict[str, float]
    requests: List[PlanFileRequest]
    predicted_unsplit_us: float
    def find_device(self, name: str) -> int: ...

class PlanResult:
    has_schedule: bool
    interrupted: bool
    solver: str
    status: str
    termination: str
    objective: Optional[float]
    bound: Optional[float]
    gap: Optional[float]
    seconds: float
    formulation: str
    notes: List[str]
    cost_notes: List[str]
    run_notes: List[str]
    makespan_us: Optional[float]
    energy_uj: Optional[float]
    references: Dict[str, float]
    best_pu: str
    best_energy_pu: str
    baselines: Dict[str, float]
    stats: Dict[str, Dict[str, Any]]
    def schedule(self) -> Dict[str, Any]: ...
    def plan_file(self) -> PlanFile: ...
    def schedule_text(self) -> str: ...
    def csv(self) -> str: ...
    def trace(self) -> Dict[str, Any]: ...
    def write(self, json: str, csv: str, trace: str) -> None: ...
    def validate(self) -> Dict[str, Any]: ...

def validate_file(path: str) -> Dict[str, Any]: ...
def validate_json(schedule: Any) -> Dict[str, Any]: ...

def dse(models: List[str], platforms: List[str], overrides: List[str], sweeps: List[str], solvers: List[str],
        objectives: List[str], latency_cap: Optional[float], fusion: str, warmup: int, runs: int, cache_dir: str,
        time_limit: float, gap: float, threads: int, search_nodes: int, warm_start: bool, jobs: int, out: str,
        resume: bool, schedules: str, boundary_cost: str,
        progress: Optional[Callable[[Dict[str, Any]], Any]]) -> Tuple[Dict[str, Any], List[Dict[str, Any]], int]: ...
def read_dse_results(path: str) -> Tuple[List[Dict[str, Any]], int]: ...
