"""classgrader/kernels/accelerator.py: a GPU's device nodes and driver libraries found at run time, on
stand-ins made here (real character devices, real link chains), and a machine with the nodes
but no driver is said to be one, not taken for a machine without a GPU."""
import os
import stat

import pytest

from classgrader.kernels import accelerator


@pytest.fixture
def dev(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("making device nodes needs root")
    folder = tmp_path / "dev"
    (folder / "nvidia-caps").mkdir(parents=True)
    names = ("nvidia0", "nvidia12", "nvidiactl", "nvidia-uvm", "nvidia-uvm-tools", "nvidia-caps/nvidia-cap1", "tty0")
    for name in names:
        os.mknod(folder / name, 0o600 | stat.S_IFCHR, os.makedev(1, 3))
    (folder / "nvidia1").write_text("a file named like a GPU")
    (folder / "nvidia-fake").symlink_to("nvidia0")
    return folder


def test_device_nodes_are_the_gpus_character_devices(dev):
    found = accelerator.device_nodes(str(dev))
    assert [os.path.relpath(path, dev) for path in found] == [
        "nvidia-uvm", "nvidia-uvm-tools", "nvidia0", "nvidia12", "nvidiactl", "nvidia-caps/nvidia-cap1"]
    assert [accelerator.place_in_jail(path) for path in found][-1] == "/dev/nvidia-caps/nvidia-cap1"
    assert accelerator.place_in_jail(str(dev / "nvidia0")) == "/dev/nvidia0"


def test_driver_libraries_with_their_links_and_not_the_toolkits(tmp_path, monkeypatch):
    driver = tmp_path / "driver"
    driver.mkdir()
    for name in ("libcuda.so.550.1", "libnvidia-ml.so.550.1", "libcudart.so.12", "libcudnn.so.9"):
        (driver / name).write_text(name)
    (driver / "libcuda.so.1").symlink_to("libcuda.so.550.1")
    (driver / "libcuda.so").symlink_to("libcuda.so.1")
    (driver / "libnvidia-ml.so.1").symlink_to(driver / "libnvidia-ml.so.550.1")
    (tmp_path / "current").symlink_to("driver")
    monkeypatch.setenv("LD_LIBRARY_PATH", f"{tmp_path / 'missing'}:{tmp_path / 'current'}")
    found = {os.path.relpath(path, tmp_path) for path in accelerator.driver_libraries()
             if path.startswith(str(tmp_path))}
    assert found == {"current", *(f"driver/{name}" for name in (
        "libcuda.so", "libcuda.so.1", "libcuda.so.550.1", "libnvidia-ml.so.1", "libnvidia-ml.so.550.1"))}


def test_nodes_without_a_driver_library_are_a_reason_not_an_empty_answer(dev):
    with pytest.raises(accelerator.AcceleratorError, match=r"found .*nvidia0.* but no libcuda\.so"):
        accelerator.find(str(dev), libraries=[])
    with_driver = accelerator.find(str(dev), libraries=["/x/libcuda.so.1"])
    assert with_driver and len(with_driver.devices) == 6
    assert not accelerator.find(str(dev / "nvidia-caps" / "none"))  # no nodes at all: no accelerator
