"""Chrome traces as files beside their page, not ``data:`` URLs inside it (render/pipeline_charts.traces_to_files):
a snippet prints each trace inline (it knows no site directory, and its output is cached by content)."""

from pathlib import Path

from parallelsel.render.pipeline_charts import traces_to_files


def on_post_page(output: str, page, config) -> str:
    if "data:application/json;base64," not in output:
        return output
    output, files = traces_to_files(output, "traces")
    for name, data in files.items():
        path = (Path(config.site_dir) / page.file.dest_uri).parent / "traces" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return output
