"""The browser edition: the lessons on JupyterLite with Pyodide (see minikafka.lite.build)."""
